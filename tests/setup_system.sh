#!/usr/bin/env bash
# System packages some tests use. Installed with apt-get when running as root; otherwise those tests skip
# and say why. Never fails the build by itself.
set -u
need=()
command -v xdg-mime >/dev/null 2>&1 || need+=(xdg-utils)
command -v update-mime-database >/dev/null 2>&1 || need+=(shared-mime-info)
command -v update-desktop-database >/dev/null 2>&1 || need+=(desktop-file-utils)
command -v mimetype >/dev/null 2>&1 || need+=(libfile-mimeinfo-perl)  # xdg-mime's filetype query uses it
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing system packages for tests: ${need[*]}"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}") >/dev/null 2>&1 \
    || echo "could not install ${need[*]}; the tests that need them will be skipped"
else
  echo "not root: ${need[*]} missing; the tests that need them will be skipped"
fi
exit 0
