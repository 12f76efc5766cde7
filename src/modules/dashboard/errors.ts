import { AppError, type ErrorCode, type ErrorDetail } from '../../lib/errors.ts';

/** A dashboard refusal that also says itself in Thai (pages pick the sentence of their language). */
export class DashboardError extends AppError {
  readonly thai: string;
  constructor(code: ErrorCode, message: string, thai: string, details: ErrorDetail[] = []) {
    super(code, message, details);
    this.thai = thai;
  }
}

/** Every refusal of the dashboard (forms, users), one named factory each; a form field is named as the form names it. */

// forms
export const fieldRequired = (name: string) =>
  new AppError('VALIDATION_ERROR', `${name} is required`, [{ field: name, message: 'required' }]);
export const fieldNotOneOf = (name: string, values: readonly string[]) =>
  new AppError('VALIDATION_ERROR', `${name} must be one of ${values.join(', ')}`, [
    { field: name, message: 'unsupported' },
  ]);
export const fiatAmountInvalid = (name: string) =>
  new AppError(
    'VALIDATION_ERROR',
    `${name} must be a positive amount with at most 2 decimals, like 1250.00 or 1,250.00`,
    [{ field: name, message: 'invalid amount' }],
  );
export const payAmountInvalid = (name: string) =>
  new AppError('VALIDATION_ERROR', `${name} must be a positive PAY amount with at most 6 decimals`, [
    { field: name, message: 'invalid amount' },
  ]);
export const scenarioUnknown = (scenarios: readonly string[]) =>
  new AppError('VALIDATION_ERROR', `scenario must be one of ${scenarios.join(', ')}`, [
    { field: 'scenario', message: 'unsupported' },
  ]);
export const graceHoursOutOfRange = () =>
  new AppError('VALIDATION_ERROR', 'grace_hours must be a whole number from 0 to 168', [
    { field: 'grace_hours', message: 'out of range' },
  ]);
export const sinceInvalid = () =>
  new AppError('VALIDATION_ERROR', 'since must be a date and time', [{ field: 'since', message: 'invalid' }]);
export const receiptFileRequired = () =>
  new AppError('VALIDATION_ERROR', 'Choose the receipt file', [{ field: 'receipt', message: 'required' }]);
export const simulateInSandboxView = () =>
  new DashboardError(
    'SANDBOX_ONLY',
    'Switch to the sandbox view to simulate payments',
    'สลับไปโหมดทดสอบเพื่อจำลองการชำระเงิน',
  );
export const confirmInLiveView = () =>
  new DashboardError(
    'SANDBOX_ONLY',
    'Receiver-confirm moves live value; switch to the live view',
    'การยืนยันรับเงินเป็นเงินจริง กรุณาสลับไปโหมดใช้งานจริง',
  );
export const sellOrderNotFound = () =>
  new DashboardError('NOT_FOUND', 'There is no sell order with this id', 'ไม่พบคำสั่งขายที่มีรหัสนี้', [
    { field: 'sell_order_id', message: 'not found' },
  ]);
export const pageNotFound = () =>
  new DashboardError('NOT_FOUND', 'There is no such page or record', 'ไม่พบหน้าหรือรายการนี้');
export const csrfMismatch = () =>
  new DashboardError(
    'FORBIDDEN',
    "The form's security token is missing or out of date. Reload the page and try again.",
    'โทเคนความปลอดภัยของแบบฟอร์มหายไปหรือหมดอายุ กรุณาโหลดหน้าใหม่แล้วลองอีกครั้ง',
  );
export const crossSiteSignIn = () =>
  new DashboardError('FORBIDDEN', 'Cross-site sign-in refused', 'ปฏิเสธการเข้าสู่ระบบจากเว็บไซต์อื่น');

// users
export const memberNotFound = () =>
  new DashboardError('NOT_FOUND', 'This person is not on your team (or has accepted already)', 'ไม่พบบุคคลนี้ในทีมของคุณ');
export const lastOwner = () =>
  new DashboardError('FORBIDDEN', 'The team needs at least one other owner first', 'ทีมต้องมีเจ้าของคนอื่นอย่างน้อยหนึ่งคนก่อน');
export const notYourself = () =>
  new DashboardError(
    'FORBIDDEN',
    'You cannot remove yourself; ask another owner',
    'คุณนำตัวเองออกจากทีมไม่ได้ กรุณาให้เจ้าของคนอื่นทำ',
  );
export const confirmationRequired = () =>
  new AppError('VALIDATION_ERROR', 'Tick the box to confirm', [{ field: 'confirm', message: 'required' }]);
export const timeZoneUnknown = () =>
  new AppError('VALIDATION_ERROR', 'time_zone must be a time zone such as Asia/Bangkok', [
    { field: 'time_zone', message: 'unsupported' },
  ]);
export const userExists = (email: string) =>
  new DashboardError(
    'MERCHANT_USER_EXISTS',
    `A dashboard user with email ${email} already exists`,
    `มีผู้ใช้ที่ใช้อีเมล ${email} อยู่แล้ว`,
  );
export const invitationInvalid = () =>
  new DashboardError(
    'UNAUTHORIZED',
    'This invitation link is invalid, used or expired',
    'ลิงก์คำเชิญไม่ถูกต้อง ถูกใช้แล้ว หรือหมดอายุ',
  );
export const currentPasswordWrong = () =>
  new DashboardError('UNAUTHORIZED', 'The current password is not correct', 'รหัสผ่านปัจจุบันไม่ถูกต้อง');
export const passwordTooShort = (min: number) =>
  new DashboardError(
    'VALIDATION_ERROR',
    `The password needs at least ${min} characters`,
    `รหัสผ่านต้องมีอย่างน้อย ${min} ตัวอักษร`,
    [{ field: 'password', message: `The password needs at least ${min} characters` }],
  );
export const passwordTooLong = (max: number) =>
  new DashboardError(
    'VALIDATION_ERROR',
    `The password may have at most ${max} characters`,
    `รหัสผ่านยาวได้ไม่เกิน ${max} ตัวอักษร`,
    [{ field: 'password', message: `The password may have at most ${max} characters` }],
  );
