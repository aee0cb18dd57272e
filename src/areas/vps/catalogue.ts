/** Plans and OS templates of virtual servers. Prices come from the region catalogue's `vps` items. */
export interface VpsPlan {
  plan_code: string;
  name: string;
  vcpus: number;
  ram_gb: number;
  storage_gb: number;
  bandwidth_tb: number;
}

export const PLANS: readonly VpsPlan[] = [
  { plan_code: 'vps-1-2', name: 'VPS 1 vCPU / 2 GB', vcpus: 1, ram_gb: 2, storage_gb: 40, bandwidth_tb: 1 },
  { plan_code: 'vps-2-4', name: 'VPS 2 vCPU / 4 GB', vcpus: 2, ram_gb: 4, storage_gb: 80, bandwidth_tb: 2 },
  { plan_code: 'vps-4-8', name: 'VPS 4 vCPU / 8 GB', vcpus: 4, ram_gb: 8, storage_gb: 160, bandwidth_tb: 4 },
  {
    plan_code: 'vps-8-16',
    name: 'VPS 8 vCPU / 16 GB',
    vcpus: 8,
    ram_gb: 16,
    storage_gb: 320,
    bandwidth_tb: 8,
  },
];

export interface OsTemplate {
  id: string;
  name: string;
  family: 'ubuntu' | 'debian' | 'rocky' | 'almalinux' | 'windows';
  version: string;
  is_windows: boolean;
}

export const OS_TEMPLATES: readonly OsTemplate[] = [
  { id: 'debian-12', name: 'Debian 12 (bookworm)', family: 'debian', version: '12', is_windows: false },
  { id: 'debian-11', name: 'Debian 11 (bullseye)', family: 'debian', version: '11', is_windows: false },
  { id: 'ubuntu-24.04', name: 'Ubuntu 24.04 LTS', family: 'ubuntu', version: '24.04', is_windows: false },
  { id: 'ubuntu-22.04', name: 'Ubuntu 22.04 LTS', family: 'ubuntu', version: '22.04', is_windows: false },
  { id: 'rocky-9', name: 'Rocky Linux 9', family: 'rocky', version: '9', is_windows: false },
  { id: 'almalinux-9', name: 'AlmaLinux 9', family: 'almalinux', version: '9', is_windows: false },
  {
    id: 'windows-2022',
    name: 'Windows Server 2022',
    family: 'windows',
    version: '2022',
    is_windows: true,
  },
];

export const planOf = (code: string) => PLANS.find((p) => p.plan_code === code.trim().toLowerCase());
export const templateOf = (id: string) => OS_TEMPLATES.find((t) => t.id === id.trim().toLowerCase());
