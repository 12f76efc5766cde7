import type { Lang } from '../../http/language.ts';

/** The payment-link page's words, in the two languages it speaks. `{n}`-style slots are filled by `fill`. */

const EN = {
  pay_to: 'Pay {merchant}',
  amount: 'Amount',
  your_amount: 'Amount to pay ({currency})',
  range: 'Between {min} and {max}',
  continue: 'Continue to payment',
  pay_how: 'You will see where to transfer on the next page, then upload your slip.',
  sandbox: 'Sandbox: no real money moves',
  share_title: 'Share this link',
  share_hint: 'Send the link, or let the payer scan the code.',
  share_qr_alt: 'QR code of this payment link',
  link: 'Link',
  used_up_title: 'This link has been paid',
  used_up_body: 'It took the payments it was made for. Ask the seller for a new link if you still need to pay.',
  expired_title: 'This link has expired',
  expired_body: 'Ask the seller for a new link.',
  inactive_title: 'This link is no longer active',
  inactive_body: 'The seller turned it off. Ask the seller for a new link.',
  not_found_title: 'Payment link not found',
  not_found_body: 'Check the link the seller gave you.',
  error_prefix: 'Could not continue',
  bad_amount: 'Enter an amount, like 150 or 150.50.',
  out_of_range: 'Enter an amount between {min} and {max}.',
  unavailable: 'Payments cannot be taken right now. Please try again in a few minutes.',
  other_lang: 'ไทย',
};

export type LinkStrings = Record<keyof typeof EN, string>;

const TH: LinkStrings = {
  pay_to: 'ชำระเงินให้ {merchant}',
  amount: 'ยอดชำระ',
  your_amount: 'จำนวนเงินที่ต้องการชำระ ({currency})',
  range: 'ตั้งแต่ {min} ถึง {max}',
  continue: 'ไปยังหน้าชำระเงิน',
  pay_how: 'หน้าถัดไปจะแสดงบัญชีที่ต้องโอน จากนั้นอัปโหลดสลิป',
  sandbox: 'โหมดทดสอบ (Sandbox): ไม่มีการโอนเงินจริง',
  share_title: 'แชร์ลิงก์นี้',
  share_hint: 'ส่งลิงก์ หรือให้ผู้ชำระสแกนคิวอาร์โค้ด',
  share_qr_alt: 'คิวอาร์โค้ดของลิงก์ชำระเงินนี้',
  link: 'ลิงก์',
  used_up_title: 'ลิงก์นี้ชำระเงินแล้ว',
  used_up_body: 'ลิงก์นี้รับชำระครบตามที่กำหนดแล้ว หากยังต้องชำระ กรุณาขอลิงก์ใหม่จากผู้ขาย',
  expired_title: 'ลิงก์นี้หมดอายุแล้ว',
  expired_body: 'กรุณาขอลิงก์ใหม่จากผู้ขาย',
  inactive_title: 'ลิงก์นี้ปิดใช้งานแล้ว',
  inactive_body: 'ผู้ขายปิดลิงก์นี้แล้ว กรุณาขอลิงก์ใหม่จากผู้ขาย',
  not_found_title: 'ไม่พบลิงก์ชำระเงิน',
  not_found_body: 'กรุณาตรวจสอบลิงก์ที่ได้รับจากผู้ขาย',
  error_prefix: 'ดำเนินการต่อไม่ได้',
  bad_amount: 'กรุณากรอกจำนวนเงิน เช่น 150 หรือ 150.50',
  out_of_range: 'กรุณากรอกจำนวนเงินระหว่าง {min} ถึง {max}',
  unavailable: 'ขณะนี้ยังรับชำระเงินไม่ได้ กรุณาลองใหม่อีกครั้งในอีกสักครู่',
  other_lang: 'English',
};

export const LINK_STRINGS: Record<Lang, LinkStrings> = { en: EN, th: TH };
