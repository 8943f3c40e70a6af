#!/bin/sh
# Install code-server from the npm registry alone, into $1 (default /tmp/vscode-e2e).
#
# `npm install code-server` fails offline-from-GitHub: its postinstall runs `npm install` in
# lib/vscode, where @vscode/ripgrep's postinstall downloads rg from api.github.com (ENOTFOUND
# here) and npm rolls the whole install back. So this does code-server's postinstall.sh by
# hand: install without scripts, put Debian's rg where @vscode/ripgrep expects it (its
# postinstall then exits early: "bin/ folder already exists"), `npm rebuild` the native
# modules against the local Node headers, and make postinstall.sh's symlinks.
#
# Needs: Node 20 (code-server 4.100.x is the last line on Node 20; 4.103+ wants 22, 4.139 wants 24),
# gcc/g++/make, /usr/include/node, libkrb5-dev (kerberos), `apt-get install ripgrep chromium`.
set -eu
DEST="${1:-/tmp/vscode-e2e}"
VERSION="${CODE_SERVER_VERSION:-4.100.3}"
export npm_config_nodedir="${npm_config_nodedir:-/usr}"  # node-gyp would fetch headers from nodejs.org
export npm_config_yes=true  # node-pty's post-install runs `npx node-gyp configure` (node-gyp from npm)

mkdir -p "$DEST"
cd "$DEST"
[ -f package.json ] || echo '{"name":"vscode-e2e","private":true}' > package.json
npm install --ignore-scripts "code-server@$VERSION"
npm rebuild argon2  # node-pre-gyp: its download fails, --fallback-to-build compiles it

cd node_modules/code-server/lib/vscode
npm install --omit=dev --ignore-scripts
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
npm rebuild  # spdlog, node-pty, kerberos, native-watchdog, ... (several minutes on 2 cores)
ln -sfn node_modules node_modules.asar
(cd bin/remote-cli && ln -sfn code-linux.sh code-server)
(cd bin/helpers && ln -sfn browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev)
echo "code-server $VERSION in $DEST/node_modules/code-server"
