/**
 * Network: private subnets in at least two AZs, since Aurora's DB subnet group needs two.
 * Clients reach SSM, S3 and Secrets Manager through endpoints, without a public IP.
 * Only the clients reach the databases, on the DB port.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as rds from 'aws-cdk-lib/aws-rds';
import { Construct } from 'constructs';
import { logRetention, type NetworkConfig } from './config';

/** The DB port, the RDS default for MySQL and MariaDB and the self-managed servers' port. */
const MYSQL_PORT = 3306;

export interface NetworkProps {
  readonly config: NetworkConfig;
  readonly namePrefix: string;
}

export class Network extends Construct {
  readonly vpc: ec2.IVpc;
  /** One private subnet per AZ, where clients and databases go. */
  readonly subnets: readonly ec2.ISubnet[];
  readonly clientSecurityGroup: ec2.SecurityGroup;
  readonly dbSecurityGroup: ec2.SecurityGroup;
  /** Self-managed servers take the DB port from the clients and from each other, for replication. */
  readonly serverSecurityGroup: ec2.SecurityGroup;
  readonly dbSubnetGroup: rds.SubnetGroup;

  constructor(scope: Construct, id: string, props: NetworkProps) {
    super(scope, id);
    const { config } = props;
    const existing = config.existingVpc;
    let createEndpoints = true;

    if (existing) {
      this.vpc = ec2.Vpc.fromVpcAttributes(this, 'Vpc', {
        vpcId: existing.vpcId,
        availabilityZones: existing.availabilityZones,
        privateSubnetIds: existing.privateSubnetIds,
        ...(existing.privateRouteTableIds ? { privateSubnetRouteTableIds: existing.privateRouteTableIds } : {}),
      });
      this.subnets = this.vpc.privateSubnets;
      createEndpoints = existing.createEndpoints;
    } else {
      const flowLogGroup = new logs.LogGroup(this, 'FlowLogs', {
        retention: logRetention(config.flowLogRetentionDays),
        removalPolicy: RemovalPolicy.DESTROY,
      });
      const privateType = config.natGateways > 0 ? ec2.SubnetType.PRIVATE_WITH_EGRESS : ec2.SubnetType.PRIVATE_ISOLATED;
      const vpc = new ec2.Vpc(this, 'Vpc', {
        ipAddresses: ec2.IpAddresses.cidr(config.cidr),
        maxAzs: config.maxAzs,
        natGateways: config.natGateways,
        subnetConfiguration: [
          ...(config.natGateways > 0 ? [{ name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 }] : []),
          { name: 'private', subnetType: privateType, cidrMask: 20 },
        ],
        flowLogs: {
          all: {
            destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogGroup),
            trafficType: ec2.FlowLogTrafficType.REJECT,
          },
        },
      });
      this.vpc = vpc;
      this.subnets = vpc.selectSubnets({ subnetType: privateType }).subnets;
    }

    this.clientSecurityGroup = new ec2.SecurityGroup(this, 'ClientSecurityGroup', {
      vpc: this.vpc,
      description:
        'aurora-bench sysbench clients: no inbound; outbound to the databases, endpoints and package sources',
      allowAllOutbound: true,
    });
    this.dbSecurityGroup = new ec2.SecurityGroup(this, 'DatabaseSecurityGroup', {
      vpc: this.vpc,
      description: 'aurora-bench Aurora clusters: MySQL from the clients only',
      allowAllOutbound: false,
    });
    this.dbSecurityGroup.addIngressRule(
      this.clientSecurityGroup,
      ec2.Port.tcp(MYSQL_PORT),
      'MySQL from the sysbench clients',
    );
    // Outbound to the package archive, S3 and the SSM and Secrets Manager endpoints, as the clients.
    this.serverSecurityGroup = new ec2.SecurityGroup(this, 'ServerSecurityGroup', {
      vpc: this.vpc,
      description:
        'aurora-bench self-managed servers: MySQL from the clients and between servers; outbound to endpoints ' +
        'and package sources',
      allowAllOutbound: true,
    });
    this.serverSecurityGroup.addIngressRule(
      this.clientSecurityGroup,
      ec2.Port.tcp(MYSQL_PORT),
      'MySQL from the sysbench clients',
    );
    // A replica connects to its writer's port.
    this.serverSecurityGroup.addIngressRule(
      this.serverSecurityGroup,
      ec2.Port.tcp(MYSQL_PORT),
      'MySQL replication between the servers of a cell',
    );

    this.dbSubnetGroup = new rds.SubnetGroup(this, 'DatabaseSubnetGroup', {
      vpc: this.vpc,
      description: 'aurora-bench: private subnets of the benchmark clusters',
      subnetGroupName: `${props.namePrefix}-db`,
      vpcSubnets: { subnets: [...this.subnets] },
      removalPolicy: RemovalPolicy.DESTROY,
    });

    if (createEndpoints) this.addEndpoints();
  }

  /** What an SSM-managed client in a private subnet needs to work without a NAT. */
  private addEndpoints(): void {
    this.vpc.addGatewayEndpoint('S3Endpoint', {
      service: ec2.GatewayVpcEndpointAwsService.S3,
      subnets: [{ subnets: [...this.subnets] }],
    });
    const endpointSecurityGroup = new ec2.SecurityGroup(this, 'EndpointSecurityGroup', {
      vpc: this.vpc,
      description: 'aurora-bench interface endpoints: HTTPS from the clients only',
      allowAllOutbound: false,
    });
    endpointSecurityGroup.addIngressRule(
      this.clientSecurityGroup,
      ec2.Port.tcp(443),
      'HTTPS from the sysbench clients',
    );
    endpointSecurityGroup.addIngressRule(
      this.serverSecurityGroup,
      ec2.Port.tcp(443),
      'HTTPS from the self-managed servers',
    );
    const services: Record<string, ec2.InterfaceVpcEndpointAwsService> = {
      Ssm: ec2.InterfaceVpcEndpointAwsService.SSM,
      SsmMessages: ec2.InterfaceVpcEndpointAwsService.SSM_MESSAGES,
      Ec2Messages: ec2.InterfaceVpcEndpointAwsService.EC2_MESSAGES,
      SecretsManager: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
    };
    for (const [name, service] of Object.entries(services)) {
      this.vpc.addInterfaceEndpoint(`${name}Endpoint`, {
        service,
        subnets: { subnets: [...this.subnets] },
        securityGroups: [endpointSecurityGroup],
        open: false,
        privateDnsEnabled: true,
      });
    }
  }

  /** Subnets by AZ for the handlers. Clients go to the subnet of their target's AZ. */
  subnetsByAz(): { az: string; subnetId: string }[] {
    return this.subnets.map((s) => ({ az: s.availabilityZone, subnetId: s.subnetId }));
  }
}
