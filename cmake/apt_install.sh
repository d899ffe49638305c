# shellcheck shell=bash
# Sourced by dev.sh, .ci/run and tests/fuzz/run.sh: ks_apt_install PACKAGE... installs Debian or Ubuntu packages
# (apt-get -qq) through sudo where not root. Its status is apt-get's, 1 where there is no apt-get; each caller says
# what a failure means for it.
ks_apt_install() {
  command -v apt-get >/dev/null 2>&1 || return 1
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}
