/**
 * What verification needs from the SMS area (its `SmsService`): the customer's default sender
 * profile, a way to send a system message of kind `VERIFY` through the SMS pipeline (which
 * prices its units), and the message's state, to tell when the code arrived. Typed structurally
 * so this area depends on the service's shape, not on its module.
 */
export interface VerifySmsPort {
  defaultSenderProfile(customerId: string): Promise<{ id: string } | null | undefined>;
  sendSystemMessage(input: {
    customerId: string;
    to: string;
    message: string;
    senderProfileId: string;
    kind: 'VERIFY';
  }): Promise<{ messageId: string; units: number; cost: number | { amount: number; currency: string } }>;
  findMessage?(
    customerId: string,
    messageId: string,
  ): Promise<{ status: string; delivered_at?: string | null; error_message?: string | null } | null>;
}

export const isVerifySmsPort = (s: unknown): s is VerifySmsPort =>
  typeof (s as VerifySmsPort | null)?.sendSystemMessage === 'function' &&
  typeof (s as VerifySmsPort | null)?.defaultSenderProfile === 'function';
