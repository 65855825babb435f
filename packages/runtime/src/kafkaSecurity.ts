import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * How a Kafka client proves who it is and protects the wire: TLS, SASL, both or neither. Unset,
 * the client speaks PLAINTEXT, as the local demo's broker on loopback does; a cluster reached over
 * a network sets them (docs/production.md, "Kafka: TLS and SASL").
 */
export const kafkaSecuritySettings = {
  /** TLS to every broker; the brokers' certificates are checked against KAFKA_SSL_CA_FILE, else the system CAs. */
  KAFKA_SSL: z.stringbool({ error: 'expected true or false' }).default(false),
  /** PEM file of the CA(s) that signed the brokers' certificates; needs KAFKA_SSL=true. */
  KAFKA_SSL_CA_FILE: z
    .string()
    .min(1)
    .refine((file) => existsSync(file), 'no such file: expected the path of a PEM file of CA certificates')
    .optional(),
  /** SASL authentication (over TLS or not, as KAFKA_SSL says); needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD. */
  KAFKA_SASL_MECHANISM: z
    .enum(['plain', 'scram-sha-256', 'scram-sha-512'], {
      error: 'expected plain, scram-sha-256 or scram-sha-512 (unset: no SASL)',
    })
    .optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
};

export type KafkaSecuritySettings = z.output<z.ZodObject<typeof kafkaSecuritySettings>>;

/** A setting that does nothing without another is refused, rather than silently ignored. */
export function refineKafkaSecurity<S extends z.ZodType<KafkaSecuritySettings>>(schema: S) {
  return schema.superRefine((config, context) => {
    const refuse = (variable: keyof KafkaSecuritySettings, message: string) =>
      context.addIssue({ code: 'custom', path: [variable], message });
    if (config.KAFKA_SSL_CA_FILE !== undefined && !config.KAFKA_SSL) {
      refuse('KAFKA_SSL_CA_FILE', 'is used only with KAFKA_SSL=true');
    }
    const credentials = ['KAFKA_SASL_USERNAME', 'KAFKA_SASL_PASSWORD'] as const;
    for (const variable of credentials) {
      if (config.KAFKA_SASL_MECHANISM !== undefined && config[variable] === undefined) {
        refuse(variable, 'is required with KAFKA_SASL_MECHANISM');
      }
      if (config.KAFKA_SASL_MECHANISM === undefined && config[variable] !== undefined) {
        refuse(variable, 'is used only with KAFKA_SASL_MECHANISM (plain, scram-sha-256 or scram-sha-512)');
      }
    }
  });
}

/** What a Kafka client (createKafkaClient) needs to connect to brokers that require TLS or SASL; empty for PLAINTEXT. */
export type KafkaSecurity = {
  /** TLS; `ca` in PEM, or the system CAs without it. */
  tls?: { ca?: string };
  sasl?: { mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512'; username: string; password: string };
};

/** The settings as createKafkaClient takes them; reads the CA file (checked to exist when the config loaded). */
export function kafkaSecurity(config: KafkaSecuritySettings): KafkaSecurity {
  const security: KafkaSecurity = {};
  if (config.KAFKA_SSL) {
    security.tls = config.KAFKA_SSL_CA_FILE ? { ca: readFileSync(config.KAFKA_SSL_CA_FILE, 'utf8') } : {};
  }
  const {
    KAFKA_SASL_MECHANISM: mechanism,
    KAFKA_SASL_USERNAME: username,
    KAFKA_SASL_PASSWORD: password,
  } = config;
  if (mechanism && username !== undefined && password !== undefined) {
    security.sasl = { mechanism, username, password };
  }
  return security;
}
