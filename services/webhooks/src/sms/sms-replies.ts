/** Links the replies carry (AccountUrl, BillingPortalUrl, ClientLinkBaseUri). */
export interface ReplyLinks {
  account: string;
  billingPortal: string;
  /** Base of a client's public page: `{clientBase}/{client number}`. */
  clientBase: string;
}

/** Every text the service replies with, in one place (they are part of the documented contract). */
export const smsReplies = {
  commands: (links: ReplyLinks): string =>
    [
      'Commands:',
      'COMMANDS - this list',
      'UNSUB <number> - unsubscribe from a client, e.g. UNSUB 3',
      'CONFIRM - send your pending announcement (clients)',
      'Any other text - draft an announcement (clients)',
      `Account: ${links.account}`,
      `Billing: ${links.billingPortal}`,
      `Clients: ${links.clientBase}`,
    ].join('\n'),
  unknownClient: (clientNumber: number): string => `There is no client number ${clientNumber}. Text COMMANDS for help.`,
  clientNumberTooLarge: (maxClientNumber: number): string => `There is no client with that number: client numbers go up to ${maxClientNumber}. Text COMMANDS for help.`,
  unsubscribed: (name: string, clientNumber: number, links: ReplyLinks): string =>
    `You are unsubscribed from ${name} (${clientNumber}). To subscribe again: ${links.clientBase}/${clientNumber}`,
  notSubscribed: (name: string, clientNumber: number): string => `You are not subscribed to ${name} (${clientNumber}).`,
  notAClient: (): string => 'Only clients can send announcements. Text COMMANDS for help.',
  draftSaved: (ttlMs: number): string => {
    const hours = Math.max(1, Math.round(ttlMs / 3_600_000));
    return `Announcement saved. Text CONFIRM to send it to your subscribers. It expires in ${hours} ${hours === 1 ? 'hour' : 'hours'}; a new text replaces it.`;
  },
  nothingPending: (): string => 'You have no announcement waiting. Text your announcement first, then CONFIRM.',
  sent: (reached: number): string => `Your announcement was sent to ${reached} ${reached === 1 ? 'subscriber' : 'subscribers'}.`,
  partlySent: (reached: number, total: number): string =>
    `Your announcement was sent to ${reached} of ${total} subscribers; the others could not be reached right now.`,
  tooLong: (maxCharacters: number, characters: number): string =>
    `Your message has ${characters} characters; at most ${maxCharacters} are accepted. Nothing was saved: send a shorter text.`,
  tryLater: (): string => 'Sorry, your message could not be processed right now. Please try again later.',
};
