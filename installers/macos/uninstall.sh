#!/bin/sh
# Removes device-agent from a Mac (run with sudo): the service, the link handler, the API key
# (revoked at the server first), the state, then the program files and the package receipt.
set -u
[ "$(id -u)" -eq 0 ] || { echo "run with sudo" >&2; exit 2; }
if [ -x /usr/local/libexec/device-agent/device-agent ]; then
	/usr/local/libexec/device-agent/device-agent uninstall
fi
rm -rf /usr/local/libexec/device-agent /usr/local/bin/device-agent "/Applications/My device posture.app"
pkgutil --forget org.device-agent.pkg >/dev/null 2>&1
echo "device-agent removed (its logs stay in /Library/Logs/device-agent)."
