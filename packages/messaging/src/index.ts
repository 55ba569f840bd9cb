export * from './kafka-publisher.js';
export * from './serial-sender.js';
export * from './platform-events.js';
