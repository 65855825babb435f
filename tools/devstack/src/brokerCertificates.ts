import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { run } from './processes.ts';

type BrokerCertificates = { keystore: string; password: string; caFile: string };

/**
 * A throwaway CA and a broker certificate for 127.0.0.1 signed by it, made with the JDK's keytool:
 * the broker's PKCS12 keystore, and the CA as PEM for clients (KAFKA_SSL_CA_FILE). Made once per
 * directory. For tests on loopback only: the password is fixed and the keys sit in the data dir.
 */
export async function brokerCertificates(dir: string): Promise<BrokerCertificates> {
  const password = 'devstack-tls';
  const certificates = {
    keystore: join(dir, 'broker.p12'),
    password,
    caFile: join(dir, 'ca.pem'),
  };
  if (existsSync(certificates.keystore) && existsSync(certificates.caFile)) return certificates;
  mkdirSync(dir, { recursive: true });
  const ca = join(dir, 'ca.p12');
  const csr = join(dir, 'broker.csr');
  const signed = join(dir, 'broker.crt');
  const { keystore, caFile } = certificates;
  const key = '-keyalg EC -groupname secp256r1 -validity 30';
  // Each step: keytool's fixed words, then the files it reads and writes, then the store it works on.
  const steps: [string, string[], string][] = [
    [`-genkeypair -alias ca ${key} -dname CN=devstack-ca -ext bc:c`, [], ca],
    [`-genkeypair -alias broker ${key} -dname CN=127.0.0.1`, [], keystore],
    ['-certreq -alias broker', ['-file', csr], keystore],
    [
      '-gencert -alias ca -rfc -validity 30 -ext SAN=IP:127.0.0.1,DNS:localhost',
      ['-infile', csr, '-outfile', signed],
      ca,
    ],
    ['-exportcert -alias ca -rfc', ['-file', caFile], ca],
    ['-importcert -alias ca', ['-file', caFile], keystore],
    ['-importcert -alias broker', ['-file', signed], keystore],
  ];
  for (const [words, files, store] of steps) {
    const storeArgs = ['-keystore', store, '-storetype', 'PKCS12', '-storepass', password, '-noprompt'];
    await run('keytool', [...words.split(' '), ...files, ...storeArgs]);
  }
  return certificates;
}
