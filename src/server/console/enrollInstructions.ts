// The ways a new device can be enrolled with one freshly created token, as copyable commands for
// each OS (docs/agent.md: token file, standard input, link; docs/deploy.md: enroll.env for the
// Debian/RPM/FreeBSD packages, MSI properties, macOS managed preferences). Shown once, on the
// console's enrollment page only.
import type { CreatedDevice } from '../admin';
import { VERSION } from '../../version';

export interface EnrollWay {
  os: 'macOS, Linux, FreeBSD' | 'Linux (Debian, Ubuntu)' | 'Linux (RHEL, Fedora, SUSE)' | 'FreeBSD' | 'Windows' | 'macOS (MDM)' | 'Any';
  way: string;
  /** What to run or deploy, exactly as shown. */
  text: string;
  note?: string;
}

/** POSIX-shell single quoting. */
const sh = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

export function enrollWays(created: CreatedDevice): EnrollWay[] {
  const { server_url: server, enrollment_token: token, enrollment_link: link } = created;
  const envLines = `DEVICE_AGENT_SERVER=${server}\\nDEVICE_AGENT_TOKEN=${token}\\n`;
  return [
    {
      os: 'macOS, Linux, FreeBSD',
      way: 'token file',
      text: [
        `(umask 077 && printf '%s\\n' ${sh(token)} > ./enrollment-token)`,
        `sudo device-agent enroll --server ${sh(server)} --token-file ./enrollment-token && rm ./enrollment-token`,
      ].join('\n'),
    },
    {
      os: 'macOS, Linux, FreeBSD',
      way: 'standard input',
      text: `sudo device-agent enroll --server ${sh(server)} --token -`,
      note: 'Paste the token at the prompt; it is not echoed.',
    },
    {
      os: 'Any',
      way: 'enrollment link',
      text: link,
      note: 'Open it on a device where device-agent is installed, or run `device-agent enroll --link-file -` and paste it.',
    },
    {
      os: 'Linux (Debian, Ubuntu)',
      way: 'package with enroll.env',
      text: [
        'sudo install -d -m 0700 /etc/device-agent',
        `printf '${envLines}' | sudo install -m 0600 /dev/stdin /etc/device-agent/enroll.env`,
        `sudo apt install ./device-agent_${VERSION}_amd64.deb`,
      ].join('\n'),
      note: 'The package enrolls, deletes enroll.env and starts the service.',
    },
    {
      os: 'Linux (RHEL, Fedora, SUSE)',
      way: 'package with enroll.env',
      text: [
        'sudo install -d -m 0700 /etc/device-agent',
        `printf '${envLines}' | sudo install -m 0600 /dev/stdin /etc/device-agent/enroll.env`,
        `sudo dnf install ./device-agent-${VERSION}-1.x86_64.rpm`,
      ].join('\n'),
    },
    {
      os: 'FreeBSD',
      way: 'package with enroll.env',
      text: [
        'install -d -m 0700 /usr/local/etc/device-agent',
        `printf '${envLines}' | install -m 0600 /dev/stdin /usr/local/etc/device-agent/enroll.env`,
        `pkg add ./device-agent-${VERSION}.pkg`,
      ].join('\n'),
    },
    {
      os: 'Windows',
      way: 'MSI properties',
      text: `msiexec /i device-agent-${VERSION}-x64.msi /qn SERVER_URL=${server} ENROLLMENT_TOKEN=${token}`,
      note: 'From an elevated prompt, or as the GPO or Intune install command line.',
    },
    {
      os: 'Windows',
      way: 'standard input',
      text: `& "C:\\Program Files\\device-agent\\device-agent.exe" enroll --server ${server} --token -`,
      note: 'From an elevated PowerShell; paste the token at the prompt.',
    },
    {
      os: 'macOS (MDM)',
      way: 'managed preferences, domain org.device-agent',
      text: ['<key>ServerURL</key>', `<string>${server}</string>`, '<key>EnrollmentToken</key>', `<string>${token}</string>`].join('\n'),
      note: 'Keys of a configuration profile for the domain org.device-agent, deployed before the pkg; remove the profile once the device is ACTIVE.',
    },
  ];
}

/**
 * How a fleet's managed install carries an enrollment secret (docs/deploy.md): the same package
 * and configuration on every machine. Shown once, on the page that created the secret.
 */
export function secretInstallWays(serverUrl: string, secret: string): EnrollWay[] {
  const envLines = `DEVICE_AGENT_SERVER=${serverUrl}\\nDEVICE_AGENT_ENROLL_SECRET=${secret}\\n`;
  const envFile = (dir: string, sudo: string) => [
    `${sudo}install -d -m 0700 ${dir}`,
    `printf '${envLines}' | ${sudo}install -m 0600 /dev/stdin ${dir}/enroll.env`,
  ];
  return [
    {
      os: 'macOS, Linux, FreeBSD',
      way: 'secret file',
      text: [
        `(umask 077 && printf '%s\\n' ${sh(secret)} > ./enroll-secret)`,
        `sudo device-agent install --server ${sh(serverUrl)} --enroll-secret-file ./enroll-secret`,
      ].join('\n'),
      note: 'Installs the service and enrolls with the secret; `device-agent enroll --server … --enroll-secret-file …` enrolls without installing.',
    },
    {
      os: 'Linux (Debian, Ubuntu)',
      way: 'package with enroll.env',
      text: [...envFile('/etc/device-agent', 'sudo '), `sudo apt install ./device-agent_${VERSION}_amd64.deb`].join('\n'),
      note: 'The same two files on every machine (apt, Ansible, your configuration management); the package enrolls and starts the service.',
    },
    {
      os: 'Linux (RHEL, Fedora, SUSE)',
      way: 'package with enroll.env',
      text: [...envFile('/etc/device-agent', 'sudo '), `sudo dnf install ./device-agent-${VERSION}-1.x86_64.rpm`].join('\n'),
    },
    {
      os: 'FreeBSD',
      way: 'package with enroll.env',
      text: [...envFile('/usr/local/etc/device-agent', ''), `pkg add ./device-agent-${VERSION}.pkg`].join('\n'),
    },
    {
      os: 'Windows',
      way: 'MSI properties',
      text: `msiexec /i device-agent-${VERSION}-x64.msi /qn SERVER_URL=${serverUrl} ENROLLSECRET=${secret}`,
      note: 'The install command line of a GPO or Intune app, the same for every machine.',
    },
    {
      os: 'macOS (MDM)',
      way: 'managed preferences, domain org.device-agent',
      text: ['<key>ServerURL</key>', `<string>${serverUrl}</string>`, '<key>EnrollSecret</key>', `<string>${secret}</string>`].join('\n'),
      note: 'Keys of a configuration profile (Jamf, Kandji, Intune) for the domain org.device-agent, deployed with the pkg to every Mac.',
    },
  ];
}
