# Sourced, not run: go_install, the one way the scripts build a pinned Go tool into the tools cache
# ($MESH_TOOLS_DIR, else ~/.cache/mesh-state-tools), each version in its own folder, built once and reused.
# With progress=true (the caller's variable; default: when stderr is a terminal) a line before and after each build.
tools="${MESH_TOOLS_DIR:-$HOME/.cache/mesh-state-tools}"

# go_install <name> <module@version> <folder> <binary>: builds into <folder>, unless <folder>/<binary> is already
# there. Go's own output (module downloads) is shown only if the build fails.
go_install() {
  local name=$1 module=$2 folder=$3 binary=$4 me show=${progress:-false}
  me=$(basename "$0" .sh)
  [ -t 2 ] && show=true
  [ -x "$folder/$binary" ] && return 0
  if ! command -v go >/dev/null 2>&1; then
    echo "$me: building $module needs Go (https://go.dev/dl/), which is not on PATH." >&2
    return 1
  fi
  [ "$show" = true ] && echo "$me: building $name (a minute or two)..." >&2
  local started=$SECONDS log
  log=$(mktemp)
  # A failed build leaves no folder behind, so the next run tries again instead of trusting half a build.
  if ! GOBIN="$folder" go install "$module" >"$log" 2>&1; then
    echo "$me: go install $module failed:" >&2
    cat "$log" >&2
    rm -rf "$folder" "$log"
    return 1
  fi
  rm -f "$log"
  [ "$show" = true ] && echo "$me: built $name in $((SECONDS - started)) s" >&2
  return 0
}
