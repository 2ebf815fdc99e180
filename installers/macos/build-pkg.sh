#!/bin/sh
# Builds device-agent-<version>.pkg on a Mac, from this directory as `npm run release` made it on
# Linux (root/ holds the files; scripts/ the installer scripts). Needs Xcode command line tools.
#
# Signing and notarisation (optional; without them the package and binaries are signed ad hoc,
# which is enough for testing but not for Gatekeeper on other Macs):
#   DEVELOPER_ID_APP="Developer ID Application: Example Corp (TEAMID)"
#   DEVELOPER_ID_INSTALLER="Developer ID Installer: Example Corp (TEAMID)"
#   NOTARY_PROFILE=<profile stored with: xcrun notarytool store-credentials>
set -eu
cd "$(dirname "$0")"
VERSION=$(cat VERSION)
LIBEXEC=root/usr/local/libexec/device-agent
APP="root/Applications/Device Agent.app"
PKG="device-agent-$VERSION.pkg"

# 1. The enrollment link handler: an AppleScript applet declaring the device-agent URL scheme.
rm -rf "$APP"
mkdir -p root/Applications
osacompile -o "$APP" "$LIBEXEC/link-handler.applescript"
cp app-Info.plist "$APP/Contents/Info.plist"
# "My device posture": this Mac's page for the user who opens it (device-agent my-device).
MY_DEVICE_APP="root/Applications/My device posture.app"
rm -rf "$MY_DEVICE_APP"
osacompile -o "$MY_DEVICE_APP" "$LIBEXEC/my-device.applescript"

# 2. Code signatures. postject (on Linux) invalidated Node's own signature: remove it, sign again.
#    A Developer ID signature uses the hardened runtime, which Node's JIT needs entitlements for.
codesign --remove-signature "$LIBEXEC/device-agent"
if [ -n "${DEVELOPER_ID_APP:-}" ]; then
	set -- --force --timestamp --options runtime --sign "$DEVELOPER_ID_APP"
else
	set -- --force --sign -
fi
codesign "$@" "$LIBEXEC/keyring.node"
codesign "$@" --entitlements entitlements.plist "$LIBEXEC/device-agent"
codesign "$@" "$APP"
codesign "$@" "$MY_DEVICE_APP"

# 3. The package (pkgbuild records every file as root:wheel).
pkgbuild --root root --scripts scripts --identifier org.device-agent.pkg --version "$VERSION" \
	--install-location / unsigned.pkg
if [ -n "${DEVELOPER_ID_INSTALLER:-}" ]; then
	productsign --sign "$DEVELOPER_ID_INSTALLER" unsigned.pkg "$PKG"
	rm unsigned.pkg
else
	mv unsigned.pkg "$PKG"
fi

# 4. Notarisation: Apple scans the package; the ticket is stapled so that it installs offline.
if [ -n "${NOTARY_PROFILE:-}" ]; then
	xcrun notarytool submit "$PKG" --keychain-profile "$NOTARY_PROFILE" --wait
	xcrun stapler staple "$PKG"
fi
echo "built $PKG"
