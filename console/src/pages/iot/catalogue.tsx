import { must } from '../../api.js';
import type { Row } from '../../ui/table.js';
import { Collection, DeleteButton } from './collection.js';

const rows = (v: unknown) => (Array.isArray(v) ? (v as Row[]) : []);
const joined = (k: string) => (r: Row) => (Array.isArray(r[k]) ? (r[k] as unknown[]).join(', ') || '—' : '—');

/** Device groups: rules and notification policies can target a group. */
export function GroupsPage() {
  return (
    <section>
      <h1>Device groups</h1>
      <Collection
        name="groups"
        noun="group"
        load={async (api) => rows((await must(api.GET('/v1/iot/groups'))).groups)}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'description', label: 'Description' },
          { key: 'color', label: 'Colour' },
        ]}
        create={{
          operationId: 'iotCreateGroup',
          submit: (api, body) => must(api.POST('/v1/iot/groups', { body: body as never })),
        }}
        actions={(r, api, done) => (
          <DeleteButton
            what="group"
            name={String(r['name'])}
            onDelete={async () => {
              await must(
                api.DELETE('/v1/iot/groups/{group_id}', { params: { path: { group_id: String(r['id']) } } }),
              );
              await done(`The group ${String(r['name'])} was deleted.`);
            }}
          />
        )}
        empty="No groups yet. A group gathers devices so that rules and policies can name them together."
      />
    </section>
  );
}

/** Device profiles: a type's default attributes and the datapoints it sends. */
export function ProfilesPage() {
  return (
    <section>
      <h1>Device profiles</h1>
      <Collection
        name="profiles"
        noun="profile"
        load={async (api) => rows((await must(api.GET('/v1/iot/profiles'))).profiles)}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'device_type', label: 'Device type' },
          { key: 'datapoint_keys', label: 'Datapoints', render: joined('datapoint_keys') },
          { key: 'device_count', label: 'Devices' },
        ]}
        create={{
          operationId: 'iotCreateProfile',
          submit: (api, body) => must(api.POST('/v1/iot/profiles', { body: body as never })),
        }}
        actions={(r, api, done) => (
          <DeleteButton
            what="profile"
            name={String(r['name'])}
            onDelete={async () => {
              await must(
                api.DELETE('/v1/iot/profiles/{profile_id}', {
                  params: { path: { profile_id: String(r['id']) } },
                }),
              );
              await done(`The profile ${String(r['name'])} was deleted.`);
            }}
          />
        )}
        empty="No profiles yet. A profile gives devices of a type their default attributes and datapoints."
      />
    </section>
  );
}

/** Datapoint definitions: the unit, type and bounds telemetry keys are checked against. */
export function DatapointsPage() {
  return (
    <section>
      <h1>Datapoints</h1>
      <Collection
        name="datapoints"
        noun="datapoint"
        load={async (api) => rows((await must(api.GET('/v1/iot/datapoints'))).datapoints)}
        columns={[
          { key: 'key', label: 'Key' },
          { key: 'name', label: 'Name' },
          { key: 'data_type', label: 'Type' },
          { key: 'unit', label: 'Unit' },
          { key: 'min', label: 'Min' },
          { key: 'max', label: 'Max' },
        ]}
        create={{
          operationId: 'iotCreateDatapoint',
          fields: ['key', 'name', 'data_type', 'unit', 'min', 'max', 'decimals', 'description'],
          submit: (api, body) => must(api.POST('/v1/iot/datapoints', { body: body as never })),
        }}
        actions={(r, api, done) => (
          <DeleteButton
            what="datapoint"
            name={String(r['key'])}
            onDelete={async () => {
              await must(
                api.DELETE('/v1/iot/datapoints/{datapoint_id}', {
                  params: { path: { datapoint_id: String(r['id']) } },
                }),
              );
              await done(`The datapoint ${String(r['key'])} was deleted.`);
            }}
          />
        )}
        empty="No datapoints defined. Without definitions every key is accepted as sent; with one, values outside its type and bounds are refused."
      />
    </section>
  );
}
