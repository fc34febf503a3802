/**
 * The pipeline's alarms: dead letters that are not drained, events the
 * publisher could not take, a delivery backlog, dispatcher errors. With an
 * `alarmEmail` they notify an SNS topic with that address subscribed.
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { ServiceFunction } from './service-function';

/**
 * Age of the oldest delivery message that means a backlog. A healthy message is
 * gone within minutes: the whole backoff sums to 630 s, and SQS stops counting
 * a message in this metric after its third receive (90 s of backoff).
 */
export const OLDEST_MESSAGE_ALARM_AGE = Duration.minutes(15);

/** How long the dead-letter queue may hold messages before it alarms: its consumer normally takes seconds. */
export const DEAD_LETTER_ALARM_AFTER = Duration.minutes(15);

/** Properties of a {@link Monitoring}. */
export interface MonitoringProps {
  /** The delivery queue. */
  readonly deliveryQueue: IQueue;
  /** Its dead-letter queue (it has a consumer). */
  readonly deadLetterQueue: IQueue;
  /** Events the publisher could not take (no consumer). */
  readonly publishFailures: IQueue;
  /** The dispatcher. */
  readonly dispatcher: ServiceFunction;
  /** Address notified of alarm state changes. @default - no topic, no notification */
  readonly alarmEmail?: string;
}

/** The alarms and, with an e-mail address, their topic. */
export class Monitoring extends Construct {
  /** Dead letters present for {@link DEAD_LETTER_ALARM_AFTER} in a row: the dead-letter consumer is not draining them. */
  readonly deadLettersAlarm: Alarm;
  /** Any event in the publisher's failure queue: domain events that produced no deliveries. */
  readonly publishFailuresAlarm: Alarm;
  /** The oldest delivery message is {@link OLDEST_MESSAGE_ALARM_AGE} old: deliveries are late. */
  readonly queueAgeAlarm: Alarm;
  /** The dispatcher failed (crash or timeout; a failed delivery is not an error) in a 5-minute period. */
  readonly dispatcherErrorsAlarm: Alarm;
  /** Every alarm of the construct. */
  readonly alarms: readonly Alarm[];
  /** The notification topic, when an address is configured. */
  readonly topic?: Topic;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const fiveMinutes = Duration.minutes(5);
    const oneMinute = Duration.minutes(1);

    // The consumer receives a dead letter within seconds, so a failing one leaves its messages mostly in flight
    // (not "visible"): depth is visible + in flight, and it alarms only when it stays above zero.
    const deadLetterDepth = new MathExpression({
      expression: 'visible + inFlight',
      label: 'Dead letters (visible + in flight)',
      period: oneMinute,
      usingMetrics: {
        visible: props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: oneMinute, statistic: 'Maximum' }),
        inFlight: props.deadLetterQueue.metricApproximateNumberOfMessagesNotVisible({ period: oneMinute, statistic: 'Maximum' }),
      },
    });
    const minutes = DEAD_LETTER_ALARM_AFTER.toMinutes();
    this.deadLettersAlarm = atLeast(this, 'DeadLettersAlarm', deadLetterDepth, 1, {
      description: `The delivery dead-letter queue has held messages for ${minutes} minutes: the dead-letter consumer is failing (see its logs); deliveries are not marked dead_lettered.`,
      evaluationPeriods: minutes,
    });
    this.publishFailuresAlarm = atLeast(
      this,
      'PublishFailuresAlarm',
      props.publishFailures.metricApproximateNumberOfMessagesVisible({ period: fiveMinutes, statistic: 'Maximum' }),
      1,
      { description: 'Domain events reached the publisher failure queue: they produced no deliveries. Fix the cause, then publish them again.' },
    );
    this.queueAgeAlarm = atLeast(
      this,
      'QueueAgeAlarm',
      props.deliveryQueue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: 'Maximum' }),
      OLDEST_MESSAGE_ALARM_AGE.toSeconds(),
      { description: `A delivery message has waited ${OLDEST_MESSAGE_ALARM_AGE.toMinutes()} minutes: the dispatcher is not keeping up or not running.` },
    );
    this.dispatcherErrorsAlarm = atLeast(this, 'DispatcherErrorsAlarm', props.dispatcher.function.metricErrors({ period: fiveMinutes, statistic: 'Sum' }), 1, {
      description: 'The dispatcher failed (an error or a timeout, not a failed delivery): its whole batch is retried.',
    });
    this.alarms = [this.deadLettersAlarm, this.publishFailuresAlarm, this.queueAgeAlarm, this.dispatcherErrorsAlarm];

    if (props.alarmEmail) {
      // TLS-only publishing (cdk-nag SNS3). No KMS key: the topic carries alarm state changes, no customer data,
      // and CloudWatch could not publish to a topic under SNS's AWS-managed key anyway.
      this.topic = new Topic(this, 'AlarmTopic', { displayName: 'Webhook delivery alarms', enforceSSL: true });
      this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
      const action = new SnsAction(this.topic);
      for (const alarm of this.alarms) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }
  }
}

/** An alarm at `metric >= threshold`, where no data is fine. */
function atLeast(
  scope: Construct,
  id: string,
  metric: IMetric,
  threshold: number,
  options: { description: string; evaluationPeriods?: number },
): Alarm {
  const evaluationPeriods = options.evaluationPeriods ?? 1;
  return new Alarm(scope, id, {
    metric,
    threshold,
    comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    evaluationPeriods,
    datapointsToAlarm: evaluationPeriods,
    // SQS publishes nothing for an idle queue, and an idle function reports no errors.
    treatMissingData: TreatMissingData.NOT_BREACHING,
    alarmDescription: options.description,
  });
}
