import type { ErrorCode } from '../../lib/errors.ts';

/**
 * The values the API speaks (statuses, event types, roles, error codes, form field names) in the words a person
 * reads, English and Thai side by side. A value missing here is shown as it is.
 */
type Words = Record<string, readonly [en: string, th: string]>;

export const STATUS_WORDS: Words = {
  created: ['Created', 'สร้างแล้ว'],
  matching: ['Matching', 'กำลังจับคู่'],
  matched: ['Matched', 'จับคู่แล้ว'],
  payment_pending: ['Awaiting payment', 'รอชำระเงิน'],
  confirming: ['Confirming', 'กำลังตรวจสอบ'],
  // a leg's slip
  checking: ['Checking', 'กำลังตรวจสลิป'],
  not_checked: ['Not checked', 'ไม่ได้ตรวจสลิป'],
  awaiting_payee: ["Awaiting seller's confirmation", 'รอผู้ขายยืนยัน'],
  partially_paid: ['Partly paid', 'ได้รับชำระบางส่วน'],
  rejected: ['Rejected', 'ไม่ผ่าน'],
  verified: ['Verified', 'ตรวจสอบแล้ว'],
  completed: ['Succeeded', 'สำเร็จ'],
  succeeded: ['Succeeded', 'สำเร็จ'],
  settled: ['Settled', 'ชำระบัญชีแล้ว'],
  failed: ['Failed', 'ล้มเหลว'],
  expired: ['Expired', 'หมดอายุ'],
  // a payment link
  open: ['Open', 'เปิดรับชำระ'],
  used_up: ['Used up', 'ใช้ครบแล้ว'],
  inactive: ['Deactivated', 'ปิดใช้งานแล้ว'],
  cancelled: ['Cancelled', 'ยกเลิกแล้ว'],
  // a refund (Stripe's spelling) and its slip
  requires_action: ["Awaiting the buyer's details", 'รอข้อมูลผู้ซื้อ'],
  canceled: ['Canceled', 'ยกเลิกแล้ว'],
  awaiting_buyer: ["Awaiting the buyer's confirmation", 'รอผู้ซื้อยืนยัน'],
  pending: ['Pending', 'รอดำเนินการ'],
  skipped: ['Skipped', 'ข้าม'],
  active: ['Active', 'ใช้งานอยู่'],
  expiring: ['Expiring', 'ใกล้หมดอายุ'],
  revoked: ['Revoked', 'ถูกเพิกถอน'],
  invited: ['Invited', 'เชิญแล้ว'],
  enabled: ['Enabled', 'เปิดใช้งาน'],
  disabled: ['Disabled', 'ปิดใช้งาน'],
  failing: ['Failing', 'ส่งไม่สำเร็จ'],
  cash_leg_in_flight: ['Cash leg in flight', 'กำลังโอนเงินสด'],
  pending_validation: ['Validating', 'กำลังตรวจสอบ'],
  validated_pending_receiver_confirm: ['Awaiting your confirmation', 'รอคุณยืนยัน'],
  confirmed: ['Confirmed', 'ยืนยันแล้ว'],
  partially_filled: ['Partially filled', 'ได้รับบางส่วน'],
  opened: ['Opened', 'เปิดแล้ว'],
  investigating: ['Investigating', 'กำลังตรวจสอบ'],
  escalated: ['Escalated', 'ส่งต่อแล้ว'],
  resolved: ['Resolved', 'ยุติแล้ว'],
  cash_leg_failure: ['Cash leg failed', 'การโอนเงินสดล้มเหลว'],
  merchant_dispute: ['Merchant dispute', 'ข้อพิพาทจากร้านค้า'],
  chargeback: ['Chargeback', 'เรียกเงินคืน'],
  favor_merchant: ['In the merchant’s favour', 'ร้านค้าชนะ'],
  favor_counterparty: ['In the counterparty’s favour', 'คู่กรณีชนะ'],
  no_action: ['No action', 'ไม่ดำเนินการ'],
  live: ['Live', 'ใช้งานจริง'],
  test: ['Test', 'ทดสอบ'],
  sandbox: ['Sandbox', 'ทดสอบ'],
};

export const EVENT_WORDS: Words = {
  'payment.matched': ['Payment matched', 'จับคู่การชำระเงินแล้ว'],
  'payment.payment_pending': ['Checkout opened', 'ผู้ซื้อเปิดหน้าชำระเงิน'],
  'payment.confirming': ['Proof uploaded', 'อัปโหลดหลักฐานแล้ว'],
  'payment.completed': ['Payment succeeded', 'ชำระเงินสำเร็จ'],
  'payment.failed': ['Payment failed', 'ชำระเงินล้มเหลว'],
  'payment.partially_paid': ['Payment partly paid', 'ได้รับชำระเงินบางส่วน'],
  'leg.awaiting_payee': ["Slip awaits the seller's confirmation", 'สลิปรอผู้ขายยืนยัน'],
  'payment.expired': ['Payment expired', 'การชำระเงินหมดอายุ'],
  'payment.cancelled': ['Payment cancelled', 'ยกเลิกการชำระเงินแล้ว'],
  'payment.settled': ['Payment settled', 'ชำระบัญชีการชำระเงินแล้ว'],
  'sell_order.cash_leg_requested': ['Cash leg requested', 'ขอให้โอนเงินสด'],
  'sell_order.completed': ['Sell order completed', 'คำสั่งขายสำเร็จ'],
  'sell_order.failed': ['Sell order failed', 'คำสั่งขายล้มเหลว'],
  'buy_order.created': ['Buy order created', 'สร้างคำสั่งซื้อ PAY แล้ว'],
  'buy_order.partially_filled': ['Buy order partially filled', 'คำสั่งซื้อ PAY ได้รับบางส่วน'],
  'buy_order.matched': ['Buy order filled', 'คำสั่งซื้อ PAY ได้รับครบ'],
  'buy_order.cancelled': ['Buy order cancelled', 'ยกเลิกคำสั่งซื้อ PAY แล้ว'],
  'buy_order.expired': ['Buy order expired', 'คำสั่งซื้อ PAY หมดอายุ'],
  'gateway.dispute.opened': ['Dispute opened', 'เปิดข้อพิพาทแล้ว'],
  'gateway.dispute.escalated': ['Dispute escalated', 'ส่งต่อข้อพิพาทแล้ว'],
  'gateway.dispute.resolved': ['Dispute resolved', 'ยุติข้อพิพาทแล้ว'],
  'pending_funds.validated': ['Funds validated', 'ตรวจสอบเงินแล้ว'],
  'pending_funds.confirmed': ['Funds confirmed', 'ยืนยันเงินแล้ว'],
  'pending_funds.failed': ['Funds failed', 'เงินรอดำเนินการล้มเหลว'],
  'pending_funds.expired': ['Funds expired', 'เงินรอดำเนินการหมดอายุ'],
  'payment_link.created': ['Payment link created', 'สร้างลิงก์ชำระเงินแล้ว'],
  'payment_link.updated': ['Payment link updated', 'อัปเดตลิงก์ชำระเงินแล้ว'],
  'settlement.completed': ['Settlement completed', 'ชำระบัญชีสำเร็จ'],
  'settlement.failed': ['Settlement failed', 'ชำระบัญชีล้มเหลว'],
  'settlement.retried': ['Settlement paid again', 'ชำระบัญชีอีกครั้งแล้ว'],
  'settlement.adjusted': ['Settlement adjusted', 'ปรับปรุงการชำระบัญชีแล้ว'],
  'webhook.test': ['Test event', 'เหตุการณ์ทดสอบ'],
  'refund.created': ['Refund created', 'สร้างรายการคืนเงินแล้ว'],
  'refund.updated': ['Refund updated', 'อัปเดตการคืนเงินแล้ว'],
  'refund.succeeded': ['Refund succeeded', 'คืนเงินสำเร็จ'],
  'refund.failed': ['Refund failed', 'คืนเงินล้มเหลว'],
  'refund.canceled': ['Refund canceled', 'ยกเลิกการคืนเงินแล้ว'],
  'payment.refunded': ['Payment refunded', 'คืนเงินครบแล้ว'],
};

/** Why a refund is made, and who pays it (the API's values). */
export const REFUND_REASON_WORDS: Words = {
  duplicate: ['Duplicate payment', 'ชำระซ้ำ'],
  fraudulent: ['Fraudulent', 'ทุจริต'],
  requested_by_customer: ['Requested by the customer', 'ลูกค้าขอคืน'],
  partial_delivery: ['Partly delivered', 'ส่งสินค้าได้บางส่วน'],
};
export const FUNDING_WORDS: Words = {
  merchant_transfer: ['Your bank transfer', 'โอนจากบัญชีของคุณ'],
  pay_balance: ['Your PAY balance', 'ยอด PAY ของคุณ'],
};

export const ROLE_WORDS: Words = {
  owner: ['Owner', 'เจ้าของ'],
  developer: ['Developer', 'นักพัฒนา'],
  finance: ['Finance', 'การเงิน'],
  viewer: ['Viewer', 'ผู้ดู'],
};

/** Form fields as their labels name them (error messages name the field a person sees). */
export const FIELD_WORDS: Words = {
  amount: ['Amount', 'จำนวนเงิน'],
  currency: ['Currency', 'สกุลเงิน'],
  order_id: ['Order id', 'รหัสคำสั่งซื้อ'],
  scenario: ['Scenario', 'สถานการณ์'],
  url: ['URL', 'URL'],
  enabled_events: ['Events', 'เหตุการณ์'],
  amount_pay: ['Amount (PAY)', 'จำนวน (PAY)'],
  amount_micro_pay: ['Amount (PAY)', 'จำนวน (PAY)'],
  target_currency: ['Payout currency', 'สกุลเงินที่รับ'],
  target_amount: ['Payout amount', 'จำนวนเงินที่รับ'],
  fiat_currency: ['Currency', 'สกุลเงิน'],
  fiat_amount: ['Fiat amount', 'จำนวนเงิน'],
  sell_order_id: ['Sell order id', 'รหัสคำสั่งขาย'],
  notes: ['Notes', 'หมายเหตุ'],
  grace_hours: ['Grace period (hours)', 'ระยะผ่อนผัน (ชั่วโมง)'],
  since: ['Since', 'ตั้งแต่'],
  receipt: ['Receipt', 'ใบเสร็จ'],
  password: ['Password', 'รหัสผ่าน'],
  new_password: ['New password', 'รหัสผ่านใหม่'],
  email: ['Email', 'อีเมล'],
  role: ['Role', 'บทบาท'],
  time_zone: ['Time zone', 'เขตเวลา'],
  cursor: ['Page', 'หน้า'],
  confirm: ['Confirmation', 'การยืนยัน'],
  reason: ['Reason', 'เหตุผล'],
  funding: ['Paid from', 'จ่ายจาก'],
  proof: ['Slip', 'สลิป'],
};

/** Why a field was refused (the `message` of an error detail). */
export const REASON_WORDS: Words = {
  required: ['is required', 'ต้องกรอก'],
  'invalid amount': ['is not a valid amount', 'จำนวนเงินไม่ถูกต้อง'],
  unsupported: ['is not one of the choices', 'ไม่ใช่ตัวเลือกที่รองรับ'],
  'out of range': ['is out of range', 'อยู่นอกช่วงที่กำหนด'],
  invalid: ['is not valid', 'ไม่ถูกต้อง'],
  'invalid cursor': ['is not valid', 'ไม่ถูกต้อง'],
};

/** Each error code as one Thai sentence (English pages show the error's own message, which says more). */
export const ERROR_WORDS_TH: Partial<Record<ErrorCode, string>> = {
  VALIDATION_ERROR: 'ข้อมูลที่กรอกไม่ถูกต้อง',
  WEBHOOK_URL_FORBIDDEN: 'ใช้ URL นี้เป็นปลายทางเว็บฮุกไม่ได้ (ต้องเป็นที่อยู่ https สาธารณะ)',
  UNAUTHORIZED: 'ไม่ได้รับอนุญาต กรุณาเข้าสู่ระบบอีกครั้ง',
  FORBIDDEN: 'บทบาทของคุณทำรายการนี้ไม่ได้',
  SANDBOX_ONLY: 'ทำรายการนี้ในโหมดนี้ไม่ได้ กรุณาสลับโหมด',
  NOT_FOUND: 'ไม่พบรายการที่ต้องการ',
  PAYMENT_DUPLICATE_ORDER_ID: 'มีการชำระเงินที่ใช้รหัสคำสั่งซื้อนี้อยู่แล้ว',
  PAYMENT_INSUFFICIENT_LIQUIDITY: 'ขณะนี้สภาพคล่องไม่พอสำหรับจำนวนเงินนี้',
  PAYMENT_BAD_STATE: 'สถานะของการชำระเงินไม่อนุญาตให้ทำรายการนี้',
  IDEMPOTENCY_KEY_CONFLICT: 'แบบฟอร์มนี้ถูกส่งไปแล้วด้วยข้อมูลอื่น กรุณาโหลดหน้าใหม่',
  PENDING_FUNDS_TERMINAL: 'รายการเงินนี้สิ้นสุดแล้ว',
  PENDING_FUNDS_VALIDATION_UNVERIFIED: 'ยังตรวจสอบรายการเงินนี้ไม่เสร็จ',
  PENDING_FUNDS_NOT_RECEIVER: 'คุณไม่ใช่ผู้รับของรายการเงินนี้',
  RECEIVER_CONFIRM_CONTENT_TYPE_UNSUPPORTED: 'ไม่รองรับชนิดไฟล์ใบเสร็จนี้ (JPEG, PNG, WebP หรือ PDF)',
  RECEIVER_CONFIRM_MALFORMED_RECEIPT: 'อ่านไฟล์ใบเสร็จไม่ได้',
  SELL_ORDER_BAD_STATE: 'สถานะของคำสั่งขายไม่อนุญาตให้ทำรายการนี้',
  SELL_ORDER_INSUFFICIENT_BALANCE: 'ยอด PAY ที่ใช้ได้ไม่พอ',
  SELL_ORDER_NOT_OWNER: 'คำสั่งขายนี้ไม่ใช่ของคุณ',
  BUY_ORDER_BAD_STATE: 'สถานะของคำสั่งซื้อ PAY ไม่อนุญาตให้ทำรายการนี้',
  DISPUTE_BAD_STATE: 'สถานะของข้อพิพาทไม่อนุญาตให้ทำรายการนี้',
  LEDGER_INSUFFICIENT_FUNDS: 'ยอดเงินไม่พอ',
  FX_PRICE_UNAVAILABLE: 'ขณะนี้ไม่มีอัตราแลกเปลี่ยน',
  SETTLEMENT_BAD_STATE: 'สถานะของการชำระบัญชีไม่อนุญาตให้ทำรายการนี้',
  WEBHOOK_ENDPOINT_LIMIT: 'มีปลายทางเว็บฮุกครบจำนวนสูงสุดแล้ว',
  REFUND_EXCEEDS_PAYMENT: 'ยอดคืนเงินรวมเกินยอดที่ได้รับชำระ',
  REFUND_BAD_STATE: 'สถานะของการคืนเงินไม่อนุญาตให้ทำรายการนี้',
  REFUND_INSUFFICIENT_BALANCE: 'ยอด PAY ที่ใช้ได้ไม่พอสำหรับการคืนเงินนี้',
  WEBHOOK_ENDPOINT_NOT_SET: 'ยังไม่ได้ตั้งปลายทางเว็บฮุก',
  MERCHANT_USER_EXISTS: 'มีผู้ใช้ที่ใช้อีเมลนี้อยู่แล้ว',
  GATEWAY_DISPUTE_CROSS_MERCHANT: 'ข้อพิพาทนี้ไม่ใช่ของคุณ',
  METHOD_NOT_ALLOWED: 'ไม่รองรับคำขอนี้',
  GONE: 'รายการนี้ไม่มีอยู่แล้ว',
  PAYLOAD_TOO_LARGE: 'ไฟล์หรือข้อมูลใหญ่เกินไป',
  RATE_LIMITED: 'มีคำขอมากเกินไป กรุณารอสักครู่แล้วลองใหม่',
  PROOF_UNSUPPORTED_TYPE: 'ไม่รองรับชนิดไฟล์นี้',
  PROOF_DUPLICATE: 'ไฟล์นี้ถูกใช้ไปแล้ว',
  QUOTE_LOCK_EXPIRED: 'อัตราที่ล็อกไว้หมดอายุแล้ว',
  QUOTE_LOCK_USED: 'อัตราที่ล็อกไว้ถูกใช้ไปแล้ว',
  QUOTE_LOCK_MISMATCH: 'อัตราที่ล็อกไว้ไม่ตรงกับรายการ',
};

/** A word of one table in one language, or the value itself when the table does not know it. */
export function wordOf(words: Words, value: string, lang: 'en' | 'th'): string {
  const pair = words[value];
  return pair ? pair[lang === 'th' ? 1 : 0] : value;
}
