import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, loadConfig } from '../src/config.ts';
import { kafkaSecurity, kafkaSecuritySettings, refineKafkaSecurity } from '../src/kafkaSecurity.ts';

const schema = refineKafkaSecurity(z.object(kafkaSecuritySettings));
const caFile = path.join(mkdtempSync(path.join(tmpdir(), 'kafka-ca-')), 'ca.pem');
writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\nnot a real one\n-----END CERTIFICATE-----\n');

function issuesOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig('test', schema, env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues;
  }
  throw new Error('expected a ConfigError, but the config loaded');
}

describe('the Kafka TLS and SASL settings', () => {
  it('default to PLAINTEXT without SASL', () => {
    expect(kafkaSecurity(loadConfig('test', schema, {}))).toEqual({});
  });

  it('become the TLS and SASL options of the client, the CA read from its file', () => {
    const config = loadConfig('test', schema, {
      KAFKA_SSL: 'true',
      KAFKA_SSL_CA_FILE: caFile,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: 'relay',
      KAFKA_SASL_PASSWORD: 'relay-secret',
    });
    expect(kafkaSecurity(config)).toEqual({
      tls: { ca: expect.stringContaining('BEGIN CERTIFICATE') },
      sasl: { mechanism: 'scram-sha-512', username: 'relay', password: 'relay-secret' },
    });
  });

  it('use the system CAs when TLS is on without a CA file', () => {
    expect(kafkaSecurity(loadConfig('test', schema, { KAFKA_SSL: 'true' }))).toEqual({ tls: {} });
  });

  it.each([
    ['KAFKA_SSL', { KAFKA_SSL: 'yes please' }],
    ['KAFKA_SSL_CA_FILE', { KAFKA_SSL: 'true', KAFKA_SSL_CA_FILE: '/no/such/ca.pem' }],
    ['KAFKA_SSL_CA_FILE', { KAFKA_SSL_CA_FILE: caFile }],
    [
      'KAFKA_SASL_MECHANISM',
      { KAFKA_SASL_MECHANISM: 'gssapi', KAFKA_SASL_USERNAME: 'u', KAFKA_SASL_PASSWORD: 'p' },
    ],
    ['KAFKA_SASL_USERNAME', { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_PASSWORD: 'p' }],
    ['KAFKA_SASL_PASSWORD', { KAFKA_SASL_MECHANISM: 'plain', KAFKA_SASL_USERNAME: 'u' }],
    ['KAFKA_SASL_USERNAME', { KAFKA_SASL_USERNAME: 'u' }],
  ])('refuse a bad or incomplete %s, naming it', (variable, env) => {
    const issues = issuesOf(env);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(new RegExp(`^${variable}: `));
  });

  it('name both credentials when a mechanism comes without them, and never print the password', () => {
    const issues = issuesOf({ KAFKA_SASL_MECHANISM: 'scram-sha-256' });
    expect(issues.map((line) => line.split(':')[0])).toEqual(['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD']);
    const refused = issuesOf({ KAFKA_SASL_MECHANISM: 'kerberos', KAFKA_SASL_PASSWORD: 's3cret' });
    expect(refused.join('\n')).not.toContain('s3cret');
  });
});
