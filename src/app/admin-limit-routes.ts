import { Type } from '@sinclair/typebox';
import { operatorAccess } from '../kernel/auth/principal.js';
import { kernelErrors } from '../kernel/errors.js';
import { defineRoute } from '../kernel/http/route.js';
import type { Kernel } from '../kernel/kernel.js';
import { PLANS } from '../kernel/limits/quotas.js';
import { Customer, customerView } from './admin-routes.js';

const TAG = 'Operator';
const PlanSchema = Type.Union(
  PLANS.map((p) => Type.Literal(p)),
  { description: 'The plan whose quotas apply (docs/limits.md)' },
);
const LimitValue = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]);

/** The operator's view of the limits table and of each customer's plan. */
export function adminLimitRoutes(kernel: Kernel) {
  return [
    defineRoute({
      method: 'PUT',
      url: '/admin/v1/customers/:customer_id/plan',
      operationId: 'adminSetCustomerPlan',
      tag: TAG,
      summary:
        'Change a customer’s plan: its quotas apply from the next create; nothing that exists is removed',
      access: operatorAccess,
      params: Type.Object({ customer_id: Type.String() }),
      body: Type.Object({ plan: PlanSchema }, { additionalProperties: false }),
      response: { 200: Customer },
      errors: [404],
      handler: async ({ params, body }) => {
        if (!(await kernel.identity.getCustomer(params.customer_id))) throw kernelErrors.notFound('Customer');
        await kernel.identity.setCustomerPlan(params.customer_id, body.plan);
        return customerView((await kernel.identity.getCustomer(params.customer_id))!);
      },
    }),
    defineRoute({
      method: 'GET',
      url: '/admin/v1/limits',
      operationId: 'adminListLimits',
      tag: TAG,
      summary: 'The limits table in force (defaults with FJORD_LIMITS applied); null is unlimited',
      access: operatorAccess,
      response: {
        200: Type.Object({
          plans: Type.Array(Type.String()),
          limits: Type.Record(
            Type.String(),
            Type.Object({
              doc: Type.String(),
              unit: Type.Optional(Type.String()),
              value: Type.Union([LimitValue, Type.Record(Type.String(), LimitValue)]),
            }),
          ),
        }),
      },
      handler: async () => ({ plans: [...PLANS], limits: kernel.limits.table() }),
    }),
  ];
}
