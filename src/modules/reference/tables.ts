/** The reference module's table: the Bank of Thailand's bank list, loaded by a migration from thai-banks.csv. */
export interface ReferenceTables {
  thai_banks: {
    code: string;
    short_code: string;
    swift_bic: string;
    name_en: string;
    name_th: string;
    promptpay_member: boolean;
  };
}
