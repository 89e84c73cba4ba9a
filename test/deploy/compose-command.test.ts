import { describe, expect, it } from 'vitest';
import { composeServiceCommand, rewriteAddresses, sidecarCommand } from './compose-command.js';
import { interpolate } from './compose-file.js';

describe('sidecarCommand()', () => {
  it('reads the entrypoint from the image and the arguments from the compose file', () => {
    const command = sidecarCommand();
    expect(command.service).toBe('sidecar');
    expect(command.entrypoint).toEqual(['tooltrace']);
    expect(command.args).toEqual(['sidecar', '--listen', '127.0.0.1:4319']);
  });

  it('points the OTLP endpoint at 127.0.0.1 and keeps the other variables', () => {
    const { env } = sidecarCommand();
    expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://127.0.0.1:4318');
    expect(env.OTEL_EXPORTER_OTLP_PROTOCOL).toBe('http/protobuf');
    expect(env.OTEL_SERVICE_NAME).toBe('demo-agent');
  });

  it("uses the compose file's default token unless the environment gives one", () => {
    expect(sidecarCommand().env.TOOLTRACE_TOKEN).toBe('tooltrace-local-demo');
    expect(sidecarCommand({ env: { TOOLTRACE_TOKEN: 'mine-0123' } }).env.TOOLTRACE_TOKEN).toBe(
      'mine-0123',
    );
  });

  it('moves ports to the ones a test bound', () => {
    const command = sidecarCommand({ ports: { 4318: 54318, 4319: 54319 } });
    expect(command.env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('http://127.0.0.1:54318');
    expect(command.args).toEqual(['sidecar', '--listen', '127.0.0.1:54319']);
  });
});

describe('composeServiceCommand()', () => {
  it("rewrites the demo's --forward URL to the local sidecar", () => {
    const command = composeServiceCommand('demo-agent', { ports: { 4319: 54319 } });
    expect(command.args).toEqual(['demo', '--forward', 'http://127.0.0.1:54319']);
  });

  it('names the services that exist when asked for one that does not', () => {
    expect(() => composeServiceCommand('nope')).toThrow(/no service nope \(it has .*sidecar/);
  });
});

describe('rewriteAddresses()', () => {
  it('replaces service hosts only where a whole name is followed by a port', () => {
    const hosts = ['sidecar', 'otel-collector', '0.0.0.0'];
    expect(rewriteAddresses('http://otel-collector:4318/v1', hosts, {})).toBe(
      'http://127.0.0.1:4318/v1',
    );
    expect(rewriteAddresses('my-sidecar:4319 sidecar.example:1 sidecar', hosts, {})).toBe(
      'my-sidecar:4319 sidecar.example:1 sidecar',
    );
    expect(rewriteAddresses('0.0.0.0:4319,sidecar:80', hosts, { 80: 8080 })).toBe(
      '127.0.0.1:4319,127.0.0.1:8080',
    );
  });
});

describe('interpolate()', () => {
  it('follows compose rules for defaults, required variables and $$', () => {
    expect(interpolate('${A:-x}', {})).toBe('x');
    expect(interpolate('${A:-x}', { A: '' })).toBe('x');
    expect(interpolate('${A-x}', { A: '' })).toBe('');
    expect(interpolate('${A}-$A', { A: 'v' })).toBe('v-v');
    expect(interpolate('$$HOME', {})).toBe('$HOME');
    expect(() => interpolate('${A:?set A}', {})).toThrow(/A is required: set A/);
  });
});
