export * from '../clients/typescript/src/webhooks.js';
