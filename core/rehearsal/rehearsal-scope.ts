import {
  REHEARSAL_METRICS_PERIOD_S,
  REHEARSAL_PARAMETER_GROUP_SETTLE_S,
  REHEARSAL_VOLUME_PERIOD_S,
} from './rehearsal-timings';

/** The lines that say what a rehearsal is and is not, printed before it starts. */
export function rehearsalScope(
  serverVersion: string,
  engines: readonly string[],
  lagS: number,
  booted: boolean,
  functionNode: string,
): string[] {
  return [
    'AWS rehearsal: the synthesized state machine runs on this machine, each Task as its bundled Lambda ' +
      `function (the asset \`cdk deploy\` uploads) in a sandbox process on Node.js ${functionNode};`,
    '  the AWS APIs are a moto server, the databases real MariaDB (or, for the PostgreSQL engines, PostgreSQL) ' +
      'servers, the clients an emulated SSM agent running bash.',
    'Not rehearsed:',
    `  - the engines themselves: MariaDB ${serverVersion} or PostgreSQL on 127.0.0.1 stand in ` +
      `for ${engines.join(', ')} (no shared storage or EBS volumes, no Aurora- or RDS-only parameters, no write ` +
      `forwarding: its Forwarding* CloudWatch metrics stay empty, their windows incomplete)`,
    ...(booted
      ? [
          "  - the AMI: a Debian 12 root made by debootstrap from Debian's archive (minbase, curl, " +
            "ca-certificates) stands in for Debian's EC2 image; its packages are installed once per package list " +
            "into a cached layer, so the user data's apt-get finds them there " +
            '(test/integration/client-boot.test.ts installs them from the clean root)',
          "  - around the unmodified user data: chroot instead of a VM (this machine's kernel and CPU " +
            "architecture, no systemd: systemctl and shutdown are stand-ins, the dead-man's switch's shutdown is " +
            "only recorded), the instance metadata at 127.0.0.1 through curl's connect-to, moto's keys for the " +
            'instance profile (also as its iam/security-credentials, which a not-ready marker uploaded by curl ' +
            "before apt signs with; moto checks no signature), the AWS CLI given --endpoint-url (Debian's " +
            '2.9.19 predates AWS_ENDPOINT_URL)',
          "  - the SSM agent: moto's S3 serves the rehearsal's amazon-ssm-agent package where AWS serves the " +
            'real one; its service registers the instance with the emulated agent, which runs the commands in ' +
            'the root; the CloudWatch agent package is not served (its install fails softly, as designed)',
        ]
      : [
          "  - a real client AMI and its user data: an emulated client boots with this machine's sysbench, no " +
            'package install',
        ]),
    "  - the Lambda runtime: this machine's Node.js and AWS SDK stand in for nodejs22.x's; a function's SDK " +
      "calls reach the emulations and moto over the sandbox's IPC channel (no signing, no HTTPS, no X-Ray); the " +
      "template's timings are replaced by the rehearsal's shorter ones",
    "  - IAM beyond the functions' own calls: each SDK call a function makes is authorized against its role in " +
      'the synthesized template (the line after the run says how many), but not what a service does with ' +
      "the caller's permissions (RunInstances' iam:PassRole, Athena's Glue and S3 reads), nor the clients' and " +
      "servers' instance roles, nor resource policies and SCPs (test/cdk checks those actions against the roles)",
    `  - real timings: instances are available in seconds, not 10-20 minutes; CloudWatch datapoints ` +
      `arrive ${lagS} s late, not 1-3 minutes; a cluster waits ` +
      String(REHEARSAL_PARAMETER_GROUP_SETTLE_S) +
      ` s, not 5 minutes, after its parameter groups were set; the minute series are collected per ` +
      `${REHEARSAL_METRICS_PERIOD_S} s period, not per minute; a cluster volume's VolumeReadIOPs/VolumeWriteIOPs ` +
      `come per ${REHEARSAL_VOLUME_PERIOD_S} s interval, not per 5 minutes, ${lagS} s after it closes`,
    '  - Performance Insights: not emulated (its API answers with no datapoints)',
    "  - real network limits and instance class performance: all traffic is loopback on this machine's CPUs",
  ];
}
