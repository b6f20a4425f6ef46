// Runs TypeScript sources directly (SWC, with decorator metadata for NestJS DI).
process.env.SWC_NODE_PROJECT = process.env.SWC_NODE_PROJECT || require('path').join(__dirname, '..', 'tsconfig.json');
require('@swc-node/register');
