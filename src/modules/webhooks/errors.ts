import { AppError } from '../../lib/errors.ts';

/** Every refusal of the webhooks module, one named factory each. */

export const urlForbidden = (is_sandbox: boolean, reason: string) =>
  new AppError(
    'WEBHOOK_URL_FORBIDDEN',
    `This URL cannot be a ${is_sandbox ? 'sandbox' : 'live'} webhook target: ${reason}`,
    [{ field: 'body.url', message: reason }],
  );
export const endpointLimit = (max: number) =>
  new AppError('WEBHOOK_ENDPOINT_LIMIT', `At most ${max} webhook endpoints per mode; delete one first`);
export const sandboxEndpointNotSet = () =>
  new AppError(
    'WEBHOOK_ENDPOINT_NOT_SET',
    'Set a sandbox webhook endpoint first (PUT /v1/webhook-endpoint with a sandbox key)',
  );
export const endpointNotSet = (is_sandbox: boolean) =>
  new AppError(
    'WEBHOOK_ENDPOINT_NOT_SET',
    `Set a ${is_sandbox ? 'sandbox' : 'live'} webhook endpoint first (PUT /v1/webhook-endpoint or POST /v1/webhook-endpoints)`,
  );
export const deliveryEndpointDeleted = () =>
  new AppError('WEBHOOK_ENDPOINT_NOT_SET', 'The endpoint of this delivery was deleted');
export const testEventToDisabledEndpoint = () =>
  new AppError('WEBHOOK_ENDPOINT_NOT_SET', 'This endpoint is disabled; enable it to send a test event');
