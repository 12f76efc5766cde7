/** Changes no table: the functions it defined live in their modules' sql/ files (src/db/repeatable.ts). */
export async function up(): Promise<void> {}
