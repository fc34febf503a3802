/** Failure reasons in words, for the attempt timeline and the delivery log (docs/behaviour.md#failure-reasons). */

/** A failure reason or `lastError` code (docs/behaviour.md#failure-reasons) in words. */
export function explainFailure(reason: string): string {
  const http = /^http_(\d{3})$/.exec(reason);
  if (http) return `The receiver answered HTTP ${http[1]}.`;
  const redirect = /^redirect_not_followed_(\d{3})$/.exec(reason);
  if (redirect) return `The receiver answered with a redirect (${redirect[1]}); redirects are never followed.`;
  const [code = reason, detail] = reason.split(/:\s*(.*)/s, 2);
  const more = detail ? ` (${detail})` : '';
  switch (code) {
    case 'timeout':
      return 'The receiver did not answer in time.';
    case 'destination_not_public':
      return 'The host resolved to an address that is not public, so nothing was sent.';
    case 'service_error':
      return `The attempt failed on the service's side${more}; it is retried and does not count toward auto-disable.`;
    case 'connection_refused':
      return 'The receiver refused the connection.';
    case 'connection_reset':
      return 'The connection was reset before an answer came.';
    case 'tls_error':
      return `The TLS handshake failed${more}.`;
    case 'dns_failure':
      return 'The host name did not resolve.';
    case 'network_error':
      return `A network error stopped the request${more}.`;
    case 'invalid_url':
      return `The URL was refused at dispatch${more}.`;
    case 'endpoint_disabled':
      return 'No request was sent: the endpoint was disabled.';
    case 'retries_exhausted':
      return 'Automatic retries were exhausted, so the delivery was dead-lettered.';
    case 'queue_receives_exhausted':
      return 'The queue gave the delivery up after too many receives, so it was dead-lettered.';
    case 'protocol_upgrade':
      return 'The receiver answered by switching protocols (101 or an upgrade) instead of answering the POST; not retried.';
    case 'invalid_status':
      return 'The receiver answered with a status outside 100–599; not retried.';
    case 'auth_failed':
      return "The endpoint's OAuth 2.0 token endpoint gave no access token, so nothing was sent to the receiver; it is retried.";
    default:
      return '';
  }
}
