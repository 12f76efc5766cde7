/** The hosted page's words, in the two languages it speaks. `{n}`-style slots are filled by `fill`. */
export type Lang = 'en' | 'th';

const EN = {
  title: 'Pay',
  amount_due: 'Amount due',
  order: 'Order',
  time_left: 'Time left to pay',
  sandbox: 'Sandbox: no real money moves',
  part: 'Payment {n} of {m}',
  split_note: 'This payment is split between {m} recipients. Pay each part separately, exactly as shown.',
  scan: 'Scan with your banking app (PromptPay)',
  qr_alt: 'PromptPay QR code for {amount}',
  promptpay_id: 'PromptPay ID',
  transfer_to: 'Transfer to',
  bank: 'Bank',
  account_number: 'Account number',
  account_name: 'Account name',
  payid: 'PayID',
  pay_exact: 'Pay the exact amount.',
  upload_title: 'After paying, upload your transfer slip',
  upload_hint: 'A photo or screenshot of the slip (JPEG, PNG, WebP or HEIC).',
  choose_file: 'Transfer slip',
  submit: 'Send proof of payment',
  leg_upload: 'Slip for payment {n} (to {payee})',
  leg_submit: 'Send slip {n}',
  leg_state: 'Slip',
  leg_missing: 'waiting for its slip',
  leg_checking: 'received, checking',
  leg_verified: 'verified',
  leg_rejected: 'rejected',
  legs_missing: 'Upload one slip per recipient: {k} of {m} still missing.',
  confirming_title: 'Checking your payment',
  confirming_body: 'We received your slip and are confirming the transfer. This page updates by itself.',
  completed_title: 'Payment received',
  completed_body: 'Thank you. Taking you back to the shop…',
  failed_title: 'Payment not confirmed',
  failed_body: 'We could not confirm this payment.',
  reason: 'Reason',
  expired_title: 'This payment has expired',
  expired_body:
    'The time to pay ran out. Go back to the shop to start again. If you already paid, contact the shop with your slip.',
  cancelled_title: 'This payment was cancelled',
  cancelled_body: 'The shop cancelled this payment. Go back to the shop to start again.',
  preparing_title: 'Preparing your payment',
  preparing_body: 'One moment. This page updates by itself.',
  back_to_shop: 'Back to the shop',
  not_found_title: 'Payment not found',
  not_found_body: 'Check the link the shop gave you.',
  error_prefix: 'Could not upload the slip',
  other_lang: 'ไทย',
};

export type Strings = Record<keyof typeof EN, string>;

const TH: Strings = {
  title: 'ชำระเงิน',
  amount_due: 'ยอดที่ต้องชำระ',
  order: 'คำสั่งซื้อ',
  time_left: 'เวลาที่เหลือในการชำระ',
  sandbox: 'โหมดทดสอบ (Sandbox): ไม่มีการโอนเงินจริง',
  part: 'รายการที่ {n} จาก {m}',
  split_note: 'ยอดนี้แบ่งจ่ายให้ผู้รับ {m} ราย กรุณาโอนแยกแต่ละรายการตามยอดที่แสดง',
  scan: 'สแกนด้วยแอปธนาคาร (พร้อมเพย์)',
  qr_alt: 'QR พร้อมเพย์ ยอด {amount}',
  promptpay_id: 'หมายเลขพร้อมเพย์',
  transfer_to: 'โอนเงินไปที่',
  bank: 'ธนาคาร',
  account_number: 'เลขที่บัญชี',
  account_name: 'ชื่อบัญชี',
  payid: 'PayID',
  pay_exact: 'กรุณาโอนยอดให้ตรงทุกสตางค์',
  upload_title: 'โอนแล้ว กรุณาอัปโหลดสลิปการโอนเงิน',
  upload_hint: 'รูปถ่ายหรือภาพหน้าจอสลิป (JPEG, PNG, WebP หรือ HEIC)',
  choose_file: 'สลิปการโอนเงิน',
  submit: 'ส่งหลักฐานการชำระเงิน',
  leg_upload: 'สลิปของรายการที่ {n} (โอนให้ {payee})',
  leg_submit: 'ส่งสลิปรายการที่ {n}',
  leg_state: 'สลิป',
  leg_missing: 'รอสลิปของรายการนี้',
  leg_checking: 'ได้รับแล้ว กำลังตรวจสอบ',
  leg_verified: 'ตรวจสอบแล้ว',
  leg_rejected: 'ไม่ผ่านการตรวจสอบ',
  legs_missing: 'กรุณาอัปโหลดสลิปแยกตามผู้รับ: ยังขาด {k} จาก {m} รายการ',
  confirming_title: 'กำลังตรวจสอบการชำระเงิน',
  confirming_body: 'เราได้รับสลิปของคุณแล้ว และกำลังยืนยันการโอน หน้านี้จะอัปเดตเอง',
  completed_title: 'ชำระเงินสำเร็จ',
  completed_body: 'ขอบคุณค่ะ กำลังพาคุณกลับไปที่ร้านค้า…',
  failed_title: 'ยืนยันการชำระเงินไม่สำเร็จ',
  failed_body: 'เราไม่สามารถยืนยันการชำระเงินนี้ได้',
  reason: 'สาเหตุ',
  expired_title: 'รายการชำระเงินนี้หมดอายุแล้ว',
  expired_body: 'หมดเวลาชำระเงิน กรุณากลับไปที่ร้านค้าเพื่อเริ่มใหม่ หากโอนไปแล้ว กรุณาติดต่อร้านค้าพร้อมสลิป',
  cancelled_title: 'รายการชำระเงินนี้ถูกยกเลิก',
  cancelled_body: 'ร้านค้ายกเลิกรายการนี้แล้ว กรุณากลับไปที่ร้านค้าเพื่อเริ่มใหม่',
  preparing_title: 'กำลังเตรียมรายการชำระเงิน',
  preparing_body: 'กรุณารอสักครู่ หน้านี้จะอัปเดตเอง',
  back_to_shop: 'กลับไปที่ร้านค้า',
  not_found_title: 'ไม่พบรายการชำระเงิน',
  not_found_body: 'กรุณาตรวจสอบลิงก์ที่ได้รับจากร้านค้า',
  error_prefix: 'อัปโหลดสลิปไม่สำเร็จ',
  other_lang: 'English',
};

export const STRINGS: Record<Lang, Strings> = { en: EN, th: TH };

export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? ''));
}

/** `?lang=` first, then the browser's Accept-Language, then Thai for THB payments and English otherwise. */
export function pickLang(
  query_lang: string | undefined,
  accept_language: string | undefined,
  currency: string | undefined,
): Lang {
  if (query_lang === 'th' || query_lang === 'en') return query_lang;
  const first = accept_language?.split(',')[0]?.trim().toLowerCase();
  if (first?.startsWith('th')) return 'th';
  if (first?.startsWith('en')) return 'en';
  return currency === 'THB' ? 'th' : 'en';
}
