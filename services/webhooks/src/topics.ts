/** Topics the service publishes to (each configurable). */
export interface Topics {
  /** PaymentConfirmedEvent. Default `Payments`. */
  payments: string;
  /** SendSmsNotificationEvent. Default `notifications`. */
  notifications: string;
  /** ProviderProductCreatedEvent. Default `ForeignProducts`. */
  foreignProducts: string;
}
