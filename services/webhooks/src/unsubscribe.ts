import type { Gateway } from './gateway.js';
import { smsReplies, type ReplyLinks } from './sms-replies.js';

/** UNSUB n: ends the sender's (a subscriber's) subscription to client number n. */
export async function unsubscribe(from: string, clientNumber: number, deps: { gateway: Gateway; links: ReplyLinks }): Promise<string> {
  const client = await deps.gateway.clientByNumber(clientNumber);
  if (client === null) return smsReplies.unknownClient(clientNumber);
  const ended = await deps.gateway.unsubscribe(client.id, from);
  return ended ? smsReplies.unsubscribed(client.name, clientNumber, deps.links) : smsReplies.notSubscribed(client.name, clientNumber);
}
