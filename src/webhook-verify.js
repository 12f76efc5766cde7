// Moved to the SDK package (clients/typescript/src/webhooks.js); kept here so existing imports keep working.
export * from '../clients/typescript/src/webhooks.js';
