// `device-agent enroll`: validate the inputs, exchange the token (registering first with an enrollment
// secret), tell the user what comes next.
import type { Command } from 'commander';
import { ApiError, CredentialsRejectedError, InvalidRequestError, RetryableError } from '../../agent/api';
import { RetrySettingError } from '../../agent/backoff';
import { enroll, type EnrollResult } from '../../agent/enrollment';
import { DeviceIdentityError } from '../../identity';
import { commandContext } from '../commandContext';
import type { CommonOptions } from '../commonOptions';
import { ALLOW_LINK_ARGUMENT_ENV, resolveEnrollmentInput } from '../enrollmentInput';
import { CommandFailure, EXIT, type ExitCode } from '../exitCodes';
import { shellQuote } from '../shellQuote';

export interface EnrollCliOptions extends CommonOptions {
  server?: string;
  token?: string;
  tokenFile?: string;
  enrollSecret?: string;
  enrollSecretFile?: string;
  allowEnrollSecretArgument?: boolean;
  linkFile?: string;
  force?: boolean;
}

export default async function enrollCommand(link: string | undefined, options: EnrollCliOptions, command: Command): Promise<ExitCode> {
  const context = await commandContext(options);
  const input = await resolveEnrollmentInput({
    link,
    allowLinkArgument: process.env[ALLOW_LINK_ARGUMENT_ENV] === '1',
    linkFile: options.linkFile,
    server: options.server,
    serverSource: command.getOptionValueSource('server'),
    token: options.token,
    tokenSource: command.getOptionValueSource('token'),
    tokenFile: options.tokenFile,
    enrollSecret: options.enrollSecret,
    enrollSecretSource: command.getOptionValueSource('enrollSecret'),
    enrollSecretFile: options.enrollSecretFile,
    allowSecretArgument: options.allowEnrollSecretArgument === true,
  });
  let result: EnrollResult;
  try {
    result = await enroll(context.state, {
      serverUrl: input.serverUrl,
      credential: input,
      keystore: context.keystore,
      force: options.force === true,
      caFile: context.caFile,
      logger: context.logger,
    });
  } catch (err) {
    throw explain(err);
  }
  process.stdout.write(successText(result, options.stateDir !== undefined));
  return EXIT.ok;
}

export function explain(err: unknown): unknown {
  if (err instanceof ApiError && err.route === 'register') return explainRegister(err);
  if (err instanceof DeviceIdentityError) return new CommandFailure(`${err.message} (nothing was sent)`, EXIT.internal);
  if (err instanceof RetrySettingError) return new CommandFailure(`${err.message} (nothing was sent)`, EXIT.usage);
  if (err instanceof CredentialsRejectedError) {
    return new CommandFailure(
      'the server refused the enrollment token: token invalid, expired or already used: ask for a new one (nothing was stored)',
      EXIT.credentialsRejected,
    );
  }
  // Not "nothing was stored": an enrollment secret's registration is kept for the next attempt.
  if (err instanceof RetryableError) return new CommandFailure(`${err.message} (not enrolled; try again later)`, EXIT.unreachable);
  if (err instanceof ApiError) return new CommandFailure(`enrollment failed: ${err.message} (nothing was stored)`, EXIT.internal);
  return err;
}

/** The extension route's refusals: the secret (401), or a server without enrollment secrets (404/405). */
function explainRegister(err: ApiError): unknown {
  if (err instanceof CredentialsRejectedError) {
    return new CommandFailure(
      'the server refused the enrollment secret: unknown, revoked, expired or used up: ask for a current secret or a one-time token (nothing was stored)',
      EXIT.credentialsRejected,
    );
  }
  if (err instanceof InvalidRequestError && (err.status === 404 || err.status === 405)) {
    return new CommandFailure(
      `${err.message}: this server does not support enrollment secrets; enroll with a one-time token instead (nothing was stored)`,
      EXIT.usage,
    );
  }
  if (err instanceof RetryableError) return new CommandFailure(`${err.message} (nothing was stored; try again later)`, EXIT.unreachable);
  return new CommandFailure(`registration failed: ${err.message} (nothing was stored)`, EXIT.internal);
}

function successText(result: EnrollResult, explicitStateDir: boolean): string {
  const lines: string[] = [];
  if (result.replaced) {
    lines.push(`Replaced the previous enrollment with ${result.replaced.serverUrl} (${result.replaced.revocation.detail}).`);
  }
  const where = result.keystore === 'keyring' ? 'the OS secret store' : `a file readable only by its owner, in ${result.stateDir}`;
  lines.push(`Enrolled with ${result.serverUrl}. The API key is in ${where}.`);
  if (result.keystoreFallbackReason) lines.push(`(No OS secret store was reachable: ${result.keystoreFallbackReason}.)`);
  const stateDirArg = explicitStateDir ? ` --state-dir ${shellQuote(result.stateDir)}` : '';
  lines.push(
    'Next: if the device-agent service is installed, it picks up this enrollment by itself (no restart needed).',
    `Otherwise start the agent with:  device-agent run${stateDirArg}`,
    `Check it any time with:          device-agent status${stateDirArg}`,
  );
  return `${lines.join('\n')}\n`;
}
