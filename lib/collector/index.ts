export * from './event';
export * from './collect';
