import { Link, match } from '../../router.js';
import { AlarmPage, AlarmsPage } from './alarms.js';
import { DatapointsPage, GroupsPage, ProfilesPage } from './catalogue.js';
import { DevicePage } from './device.js';
import { DevicesPage } from './devices.js';
import { NotificationsPage } from './notifications.js';
import { RulesPage } from './rules.js';

const TABS = [
  { href: '/iot', name: 'Devices' },
  { href: '/iot/alarms', name: 'Alarms' },
  { href: '/iot/rules', name: 'Alarm rules' },
  { href: '/iot/notifications', name: 'Notifications' },
  { href: '/iot/groups', name: 'Groups' },
  { href: '/iot/profiles', name: 'Profiles' },
  { href: '/iot/datapoints', name: 'Datapoints' },
];

/** The IoT area: its own pages under /iot (devices, alarms, rules, notifications, the catalogue). */
export function IotPages({ path }: { path: string }) {
  const device = match('/iot/devices/:id', path);
  const alarm = match('/iot/alarms/:id', path);
  const tab = TABS.find((t) => t.href !== '/iot' && path.startsWith(t.href)) ?? TABS[0]!;
  let page = <DevicesPage />;
  if (device) page = <DevicePage key={device['id']} id={device['id']!} />;
  else if (alarm) page = <AlarmPage key={alarm['id']} id={alarm['id']!} />;
  else if (path === '/iot/alarms') page = <AlarmsPage />;
  else if (path === '/iot/rules') page = <RulesPage />;
  else if (path === '/iot/notifications') page = <NotificationsPage />;
  else if (path === '/iot/groups') page = <GroupsPage />;
  else if (path === '/iot/profiles') page = <ProfilesPage />;
  else if (path === '/iot/datapoints') page = <DatapointsPage />;
  return (
    <>
      <nav class="tabs" aria-label="IoT pages">
        {TABS.map((t) => (
          <Link key={t.href} href={t.href} aria-current={t === tab ? 'page' : undefined}>
            {t.name}
          </Link>
        ))}
      </nav>
      {page}
    </>
  );
}
