#!/usr/bin/env bash
# Installs what the real-editor tests (test/e2e) need, and nothing when it is already there:
#   - Debian packages: chromium (driven by playwright-core), neovim (0.7.2 on bookworm) and the
#     build tools code-server's native modules compile with;
#   - code-server 4.100.3 (VS Code 1.100.3, the last release that runs on Node 20) into
#     $BITEXACT_E2E_HOME/code-server-4.100.3 (default ~/.cache/bitexact-e2e);
#   - pre-commit (pip, into $BITEXACT_E2E_HOME/pre-commit-venv) for the hook test;
#   - CPU PyTorch (pip) for the probe tests.
#
# Only the npm registry and Debian's archive are reachable, so code-server's own postinstall (which
# refuses root and downloads ripgrep and argon2 binaries from GitHub) is skipped and its steps are
# done here by hand: ripgrep comes from Debian, argon2 and the other native modules build from source.
#
# Exit status 0 when everything is in place; non-zero, with a line saying what failed, otherwise.
set -euo pipefail

CODE_SERVER_VERSION=4.100.3
E2E_HOME=${BITEXACT_E2E_HOME:-$HOME/.cache/bitexact-e2e}
TARGET=$E2E_HOME/code-server-$CODE_SERVER_VERSION
APT_PACKAGES=(chromium neovim build-essential pkg-config python3 libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev ripgrep)

started=$SECONDS
step=""
fail() {
  echo "install-e2e: FAILED while $step (after $((SECONDS - started)) s); see the output above" >&2
  exit 1
}
trap fail ERR

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi
}

# --- Debian packages ---------------------------------------------------------------------------
step="checking Debian packages"
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then missing+=("$pkg"); fi
done
if [ ${#missing[@]} -gt 0 ]; then
  step="installing Debian packages: ${missing[*]}"
  echo "install-e2e: apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -q >/dev/null
  as_root apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "install-e2e: Debian packages already installed"
fi
step="checking the installed programs"
[ -x /usr/bin/chromium ] || { echo "install-e2e: /usr/bin/chromium is missing after apt-get" >&2; false; }
command -v nvim >/dev/null || { echo "install-e2e: nvim is missing after apt-get" >&2; false; }
echo "install-e2e: $(nvim --version | head -1); $(/usr/bin/chromium --version 2>/dev/null | tail -1)"

# --- code-server -------------------------------------------------------------------------------
code_server_works() {
  [ -f "$TARGET/.complete" ] && "$TARGET/node_modules/.bin/code-server" --version >/dev/null 2>&1
}

mkdir -p "$E2E_HOME"
# One install at a time (two CI jobs or a developer and a test run on the same machine).
exec 9>"$E2E_HOME/.install.lock"
step="waiting for another install-e2e.sh to finish"
flock -w 900 9

if code_server_works; then
  echo "install-e2e: code-server $CODE_SERVER_VERSION already installed in $TARGET"
else
  # Build in a staging folder and move it into place only when every step passed, so a half
  # install is never taken for a complete one.
  STAGE=$TARGET.partial
  rm -rf "$STAGE" "$TARGET"
  mkdir -p "$STAGE"
  cd "$STAGE"
  step="writing the package.json for code-server"
  printf '{ "name": "bitexact-e2e-code-server", "private": true }\n' >package.json
  step="installing code-server $CODE_SERVER_VERSION from npm (without its scripts)"
  echo "install-e2e: npm install code-server@$CODE_SERVER_VERSION"
  npm install --save-exact --ignore-scripts --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION"
  step="building argon2 from source (its prebuilt binary is on GitHub)"
  npm rebuild argon2 --loglevel=error >/dev/null 2>&1 || npm rebuild argon2

  VSCODE=$STAGE/node_modules/code-server/lib/vscode
  cd "$VSCODE"
  step="installing VS Code's own dependencies"
  npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error
  step="putting Debian's ripgrep where @vscode/ripgrep looks (its postinstall downloads from GitHub)"
  mkdir -p node_modules/@vscode/ripgrep/bin
  cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  step="building VS Code's native modules (node-pty, spdlog, kerberos, ...)"
  npm_config_yes=true npm rebuild --loglevel=error
  step="linking what code-server's postinstall links"
  ln -sfn node_modules node_modules.asar
  (cd bin/remote-cli && ln -sfn code-linux.sh code-server)
  (cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
  step="installing the built-in extensions' dependencies"
  (cd extensions && npm_config_yes=true npm install --omit=dev --no-audit --no-fund --loglevel=error)

  step="moving code-server into place"
  cd "$E2E_HOME"
  mv "$STAGE" "$TARGET"
  # npm's .bin links are relative, so they survive the move; the check below proves it.
  touch "$TARGET/.complete"
  step="running the installed code-server"
  code_server_works || { echo "install-e2e: $TARGET/node_modules/.bin/code-server --version fails" >&2; rm -f "$TARGET/.complete"; false; }
fi

# --- CPU PyTorch, for the probe tests (test/runs/probe.test.ts) ---------------------------------
if ! python3 -c "import torch" >/dev/null 2>&1; then
  step="installing CPU PyTorch (pip, from the local index)"
  python3 -m pip install --quiet --retries 0 --timeout 5 torch==2.13.0+cpu
fi
echo "install-e2e: torch $(python3 -c 'import torch; print(torch.__version__)')"

# --- pre-commit, for the hook test (test/e2e/pre-commit.test.ts) --------------------------------
PRE_COMMIT_VENV=$E2E_HOME/pre-commit-venv
if ! "$PRE_COMMIT_VENV/bin/pre-commit" --version >/dev/null 2>&1; then
  step="installing pre-commit into $PRE_COMMIT_VENV (pip, from the local index)"
  rm -rf "$PRE_COMMIT_VENV"
  python3 -m venv "$PRE_COMMIT_VENV"
  "$PRE_COMMIT_VENV/bin/pip" install --quiet --retries 0 --timeout 5 pre-commit
fi
echo "install-e2e: $("$PRE_COMMIT_VENV/bin/pre-commit" --version) in $PRE_COMMIT_VENV"

echo "install-e2e: code-server $("$TARGET/node_modules/.bin/code-server" --version | head -1) in $TARGET"
echo "install-e2e: done in $((SECONDS - started)) s"
