import { Type } from '@sinclair/typebox';
import type { CustomerRow } from '../kernel/auth/identity-repo.js';
import { operatorAccess } from '../kernel/auth/principal.js';
import { kernelErrors } from '../kernel/errors.js';
import { Nullable, Timestamp } from '../kernel/http/common-schemas.js';
import { pageOf, pageQuery } from '../kernel/http/pagination.js';
import { defineRoute } from '../kernel/http/route.js';
import type { Kernel } from '../kernel/kernel.js';

const TAG = 'Operator';

export const Customer = Type.Object(
  {
    customer_id: Type.String(),
    short_id: Type.String(),
    email: Type.String(),
    first_name: Nullable(Type.String()),
    last_name: Nullable(Type.String()),
    company: Nullable(Type.String()),
    customer_type: Type.String(),
    status: Type.String(),
    plan: Type.String(),
    created_at: Timestamp(),
  },
  { title: 'OperatorCustomer' },
);

export const NewCustomerBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 254 }),
    customer_type: Type.Optional(Type.Union([Type.Literal('private'), Type.Literal('business')])),
    first_name: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    last_name: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    company: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    plan: Type.Optional(Type.Union(['free', 'basic', 'pro', 'enterprise'].map((p) => Type.Literal(p)))),
  },
  { additionalProperties: false },
);

export function customerView(c: CustomerRow) {
  return {
    customer_id: c.id,
    short_id: c.short_id,
    email: c.email,
    first_name: c.first_name,
    last_name: c.last_name,
    company: c.company,
    customer_type: c.customer_type,
    status: c.status,
    plan: c.plan,
    created_at: new Date(c.created_at).toISOString(),
  };
}

/** Creates a customer and a PAT holding every scope: what `fjord admin customer create` prints. */
export async function createCustomerWithPat(
  kernel: Pick<Kernel, 'identity'>,
  input: {
    email: string;
    customerType?: 'private' | 'business';
    firstName?: string | null;
    lastName?: string | null;
    company?: string | null;
    plan?: string;
  },
) {
  const customer = await kernel.identity.createCustomer(input);
  const { key, view } = await kernel.identity.createFullPat(customer.id, 'operator-issued PAT');
  return { ...customerView(customer), pat: key, pat_id: view.id };
}

export interface EmulatorControls {
  reset(): Promise<void>;
}

export function adminRoutes(kernel: Kernel, emulator: EmulatorControls) {
  const emulatorOnly = () => {
    if (!kernel.config.emulator) throw kernelErrors.emulatorOnly();
  };
  const clockView = () => ({
    now: kernel.clock.now().toISOString(),
    offset_seconds: kernel.clock.offsetSeconds,
  });
  const ClockView = Type.Object({ now: Timestamp(), offset_seconds: Type.Number() });
  return [
    defineRoute({
      method: 'POST',
      url: '/admin/v1/customers',
      operationId: 'adminCreateCustomer',
      tag: TAG,
      summary: 'Create a customer with a PAT holding every scope',
      access: operatorAccess,
      body: NewCustomerBody,
      response: { 201: Type.Object({ ...Customer.properties, pat: Type.String(), pat_id: Type.String() }) },
      errors: [409],
      handler: async ({ body }) =>
        createCustomerWithPat(kernel, {
          email: body.email,
          customerType: body.customer_type,
          firstName: body.first_name,
          lastName: body.last_name,
          company: body.company,
          plan: body.plan,
        }),
    }),
    defineRoute({
      method: 'GET',
      url: '/admin/v1/customers',
      operationId: 'adminListCustomers',
      tag: TAG,
      summary: 'List customers',
      access: operatorAccess,
      query: pageQuery('per_page'),
      response: {
        200: Type.Object({
          customers: Type.Array(Customer),
          total: Type.Integer(),
          page: Type.Integer(),
          per_page: Type.Integer(),
        }),
      },
      handler: async ({ query }) => {
        const { page, size, limit, offset } = pageOf(query);
        const rows = await kernel.identity.listCustomers(limit, offset);
        return {
          customers: rows.map(customerView),
          total: await kernel.identity.countCustomers(),
          page,
          per_page: size,
        };
      },
    }),
    defineRoute({
      method: 'PATCH',
      url: '/admin/v1/customers/:customer_id',
      operationId: 'adminUpdateCustomer',
      tag: TAG,
      summary: 'Suspend or reactivate a customer (suspended customers’ credentials stop working at once)',
      access: operatorAccess,
      params: Type.Object({ customer_id: Type.String() }),
      body: Type.Object(
        { status: Type.Union([Type.Literal('active'), Type.Literal('suspended')]) },
        { additionalProperties: false },
      ),
      response: { 200: Customer },
      errors: [404],
      handler: async ({ params, body }) => {
        if (!(await kernel.identity.getCustomer(params.customer_id))) throw kernelErrors.notFound('Customer');
        await kernel.identity.setCustomerStatus(params.customer_id, body.status);
        return customerView((await kernel.identity.getCustomer(params.customer_id))!);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/admin/v1/clock',
      operationId: 'adminGetClock',
      tag: TAG,
      summary: 'Read Fjord’s clock',
      access: operatorAccess,
      response: { 200: ClockView },
      handler: async () => clockView(),
    }),
    defineRoute({
      method: 'POST',
      url: '/admin/v1/clock/advance',
      operationId: 'adminAdvanceClock',
      tag: TAG,
      summary: 'Move the clock forward and run every job that comes due (emulator mode)',
      access: operatorAccess,
      body: Type.Object(
        { seconds: Type.Number({ minimum: 0, maximum: 10 * 365 * 86400 }) },
        { additionalProperties: false },
      ),
      description:
        "`jobs_due` counts the jobs and schedules that were due once the clock moved; `jobs_run` those this call ran itself (the background worker may have run some of them first). It answers once every due job this process took has finished, including the worker's.",
      response: {
        200: Type.Object({ ...ClockView.properties, jobs_due: Type.Integer(), jobs_run: Type.Integer() }),
      },
      errors: [403],
      handler: async ({ body }) => {
        emulatorOnly();
        await kernel.clockStore.advance(body.seconds);
        const jobsDue = await kernel.jobs.countDue();
        const jobsRun = await kernel.jobs.settle();
        return { ...clockView(), jobs_due: jobsDue, jobs_run: jobsRun };
      },
    }),
    defineRoute({
      method: 'POST',
      url: '/admin/v1/reset',
      operationId: 'adminReset',
      tag: TAG,
      summary: 'Erase all state (emulator mode); the development credentials and the seed are restored',
      description:
        'The clock goes back to real time. With FJORD_SEED_FILE set, the file is read and checked first: an invalid seed answers 409 `invalid_seed` and nothing is erased.',
      access: operatorAccess,
      response: { 200: Type.Object({ ok: Type.Boolean() }) },
      errors: [403, 409],
      handler: async () => {
        emulatorOnly();
        await emulator.reset();
        return { ok: true };
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/admin/v1/jobs',
      operationId: 'adminJobStats',
      tag: TAG,
      summary: 'Count jobs by state',
      access: operatorAccess,
      response: { 200: Type.Object({ jobs: Type.Record(Type.String(), Type.Integer()) }) },
      handler: async () => ({ jobs: await kernel.jobs.stats() }),
    }),
  ];
}
