export * from './data-boundary';
