import type { GatewayPort } from '../gateway/gateway-port.js';
import { MAX_CLIENT_NUMBER } from './sms-commands.js';
import { smsReplies, type ReplyLinks } from './sms-replies.js';

/**
 * UNSUB n: ends the sender's (a subscriber's) subscription to client number n. A number beyond
 * the gateway's Int (`clientNumber` undefined) names no client: answered without asking the gateway.
 * Only a subscription that began before the command arrived ends: the write may land after its
 * deadline (the sender was asked to try again), when the sender may have subscribed anew.
 */
export async function unsubscribe(from: string, clientNumber: number | undefined, deps: { gateway: GatewayPort; links: ReplyLinks; now: () => number }): Promise<string> {
  const arrivedAt = new Date(deps.now());
  if (clientNumber === undefined) return smsReplies.clientNumberTooLarge(MAX_CLIENT_NUMBER);
  const client = await deps.gateway.clientByNumber(clientNumber);
  if (client === null) return smsReplies.unknownClient(clientNumber);
  const ended = await deps.gateway.unsubscribe(client.id, from, arrivedAt);
  return ended ? smsReplies.unsubscribed(client.name, clientNumber, deps.links) : smsReplies.notSubscribed(client.name, clientNumber);
}
