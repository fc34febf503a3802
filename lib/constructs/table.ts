/**
 * The service's one DynamoDB table (docs/architecture.md#table-and-indexes), created from the shared key
 * schema in lambdas/store/table-schema.ts, with grants that name exactly the
 * actions and keys each kind of function needs.
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, type IScalableTableAttribute } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { RateLimitBucket } from '#lambdas/contract/rate-limits';
import { INDEXES, keys, TABLE } from '#lambdas/store/table-schema';
import type { TableAccess } from './function-access';

/** Where a function's Query runs: the table itself or one of its indexes, by its name in the schema. */
export type QueryTarget = 'table' | (typeof INDEXES)[number]['name'];

/**
 * The utilisation auto scaling keeps a provisioned table and each of its indexes at, in percent
 * of the provisioned units: room for a burst while scaling catches up (it reacts in minutes), and
 * the figure the benchmark's cost model prices provisioned capacity at (bench/cost.ts).
 */
export const TABLE_TARGET_UTILIZATION_PERCENT = 70;

/** The bounds auto scaling moves provisioned capacity within, units per second (stage setting `tableCapacity`). */
export interface TableCapacity {
  readonly readMin: number;
  readonly readMax: number;
  readonly writeMin: number;
  readonly writeMax: number;
}

/**
 * How the table pays for throughput (stage setting `tableBillingMode`): `on-demand` per request
 * (no capacity to plan; the default), or `provisioned` with auto scaling between the
 * {@link TableCapacity} bounds at {@link TABLE_TARGET_UTILIZATION_PERCENT}, on the table and on
 * each index alike: cheaper for steady high volume, throttled by a burst faster than scaling.
 */
export type TableBilling = { readonly mode: 'on-demand' } | ({ readonly mode: 'provisioned' } & TableCapacity);

/** Properties of a {@link ServiceTable}. */
export interface ServiceTableProps {
  /**
   * What happens to the table when the stack is deleted. RETAIN also turns on
   * deletion protection, so the table cannot be deleted by accident either.
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /** @default { mode: 'on-demand' } */
  readonly billing?: TableBilling;
}

/**
 * The table: on-demand (or provisioned with auto scaling: {@link TableBilling}), point-in-time
 * recovery, TTL on the schema's TTL attribute, and every GSI of the schema with its projection
 * (gsi1 all attributes; the retention and repair indexes keys only; the delivery log keys and its
 * filter attributes).
 */
export class ServiceTable extends Construct {
  /** The table. */
  readonly table: Table;

  constructor(scope: Construct, id: string, props: ServiceTableProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    const billing = props.billing ?? { mode: 'on-demand' };
    // Provisioned: start at the minimum; auto scaling (below) owns the figures from then on.
    const provisioned = billing.mode === 'provisioned' ? { readCapacity: billing.readMin, writeCapacity: billing.writeMin } : {};
    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      billingMode: billing.mode === 'provisioned' ? BillingMode.PROVISIONED : BillingMode.PAY_PER_REQUEST,
      ...provisioned,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: TABLE.ttlAttribute,
      removalPolicy,
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    });
    for (const gsi of INDEXES) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.name,
        partitionKey: { name: gsi.partitionKey, type: AttributeType.STRING },
        sortKey: { name: gsi.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType[gsi.projection],
        ...('nonKeyAttributes' in gsi ? { nonKeyAttributes: [...gsi.nonKeyAttributes] } : {}),
        ...provisioned,
      });
    }
    if (billing.mode === 'provisioned') this.autoScale(billing);
  }

  /**
   * Target tracking on the table and on every index, reads and writes: an index has its own
   * capacity, and a write to the table that touches an index consumes the index's write units
   * too, so an index left small would throttle the table's writes.
   */
  private autoScale(capacity: TableCapacity): void {
    const track = (attribute: IScalableTableAttribute) =>
      attribute.scaleOnUtilization({ targetUtilizationPercent: TABLE_TARGET_UTILIZATION_PERCENT });
    const reads = { minCapacity: capacity.readMin, maxCapacity: capacity.readMax };
    const writes = { minCapacity: capacity.writeMin, maxCapacity: capacity.writeMax };
    track(this.table.autoScaleReadCapacity(reads));
    track(this.table.autoScaleWriteCapacity(writes));
    for (const gsi of INDEXES) {
      track(this.table.autoScaleGlobalSecondaryIndexReadCapacity(gsi.name, reads));
      track(this.table.autoScaleGlobalSecondaryIndexWriteCapacity(gsi.name, writes));
    }
  }

  /** The ARN a Query on `target` names: the table's, or its index's. */
  private queryResource(target: QueryTarget): string {
    return target === 'table' ? this.table.tableArn : `${this.table.tableArn}/index/${target}`;
  }

  /**
   * Grants a function exactly `access` (lib/constructs/function-access.ts): its item actions on the
   * table, and Query on the table or the indexes it names, one by one (no `index/*` wildcard, so an
   * index is readable only by the functions that query it). No Scan, no table-level actions.
   */
  grantAccess(grantee: iam.IGrantable, access: TableAccess): void {
    if (access.actions.length > 0) iam.Grant.addToPrincipal({ grantee, actions: [...access.actions], resourceArns: [this.table.tableArn] });
    if (access.queries.length > 0)
      iam.Grant.addToPrincipal({ grantee, actions: ['dynamodb:Query'], resourceArns: access.queries.map((q) => this.queryResource(q)) });
  }

  /**
   * Lets a function count requests in one rate-limit bucket: UpdateItem, only on
   * items whose partition key is that bucket's (`RL#<bucket>#…`, from the
   * schema's key builder). A read-only operation gets no other write.
   */
  grantRateLimitCounter(grantee: iam.IGrantable, bucket: RateLimitBucket): iam.Grant {
    return this.grantOnLeadingKeys(grantee, ['dynamodb:UpdateItem'], keys.rateLimit(bucket, '*', 0).pk);
  }

  /**
   * Lets the authorizer look a token up by hash: GetItem, only on the
   * `TOKENHASH#…` items (from the schema's key builder).
   */
  grantTokenLookup(grantee: iam.IGrantable): iam.Grant {
    return this.grantOnLeadingKeys(grantee, ['dynamodb:GetItem'], keys.tokenHash('*').pk);
  }

  /**
   * Lets a workspace route's function read the workspace item, which `authorize` reads for a staff
   * session (docs/behaviour.md#staff-sign-in: the workspace must exist and not be being erased):
   * GetItem, only in the `WS#…` partitions (IAM conditions name partition keys, not sort keys).
   */
  grantWorkspaceLookup(grantee: iam.IGrantable): iam.Grant {
    return this.grantOnLeadingKeys(grantee, ['dynamodb:GetItem'], keys.workspace('*').pk);
  }

  private grantOnLeadingKeys(grantee: iam.IGrantable, actions: string[], leadingKeyPattern: string): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions,
      resourceArns: [this.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [leadingKeyPattern] } },
    });
  }
}
