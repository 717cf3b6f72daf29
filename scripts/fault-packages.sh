#!/usr/bin/env bash
# Installs the Debian packages the fault tools need (chaos/: FUSE for lazyfs, nftables and iproute2 for network
# namespaces) when they are missing and this is root on a Debian-like machine; elsewhere says what is missing.
# Sourced by scripts/test-chaos.sh.
missing=()
command -v fusermount3 >/dev/null 2>&1 || missing+=(fuse3)
command -v nft >/dev/null 2>&1 || missing+=(nftables)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "fault-packages: installing ${missing[*]} (apt-get)" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
  else
    echo "fault-packages: ${missing[*]} missing and not root with apt-get: the lazyfs and netns tests will skip and say why" >&2
  fi
fi
