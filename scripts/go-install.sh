# Sourced, not run: go_install, the one way the scripts build a pinned Go tool into the tools cache
# ($MESH_TOOLS_DIR, else ~/.cache/mesh-state-tools), each version in its own folder, built once and reused.
tools="${MESH_TOOLS_DIR:-$HOME/.cache/mesh-state-tools}"

# go_install <module@version> <folder> <binary>: builds into <folder>, unless <folder>/<binary> is already there.
go_install() {
  local module=$1 folder=$2 binary=$3 me
  me=$(basename "$0" .sh)
  [ -x "$folder/$binary" ] && return 0
  if ! command -v go >/dev/null 2>&1; then
    echo "$me: building $module needs Go (https://go.dev/dl/), which is not on PATH." >&2
    return 1
  fi
  echo "$me: building $module into $folder" >&2
  local started=$SECONDS
  # A failed build leaves no folder behind, so the next run tries again instead of trusting half a build.
  if ! GOBIN="$folder" go install "$module" >&2; then
    rm -rf "$folder"
    return 1
  fi
  echo "$me: built $module in $((SECONDS - started)) s" >&2
}
