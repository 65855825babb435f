import type { KafkaTopology } from '../shared/apiTypes.ts';
import { byId, h } from './dom.ts';

/**
 * The brokers and, per partition of the event topics, the leader and the in-sync replicas. On one
 * broker it is a short list; on the cluster it is where a kill -9 shows: the dead broker's
 * partitions get new leaders within seconds, their in-sync replicas shrink to two, and grow back
 * to three once it has caught up.
 */
export function renderKafka(topology: KafkaTopology): void {
  byId('kafka-status').textContent = topology.error ?? '';
  byId('kafka-brokers').replaceChildren(...brokerRows(topology));
  byId('kafka-groups').replaceChildren(...topology.groups.flatMap(groupRows));
  byId('kafka-partitions').replaceChildren(...topology.partitions.map(partitionRow));
}

/** Every broker the cluster lists or a partition names, and how many partitions each leads. */
function brokerRows(topology: KafkaTopology): HTMLElement[] {
  const leads = new Map<number, number>();
  for (const p of topology.partitions) leads.set(p.leader, (leads.get(p.leader) ?? 0) + 1);
  const known = new Set([
    ...topology.brokers.map((b) => b.nodeId),
    ...topology.partitions.flatMap((p) => p.replicas),
  ]);
  const listed = new Map(topology.brokers.map((b) => [b.nodeId, b.address]));
  return [...known]
    .sort((a, b) => a - b)
    .map((nodeId) => {
      const address = listed.get(nodeId);
      return h(
        'tr',
        { 'data-node': String(nodeId) },
        h('td', {}, `broker ${nodeId}`, address ? h('span', { class: 'muted' }, ` ${address}`) : ''),
        h(
          'td',
          {},
          h(
            'span',
            { class: `badge ${address ? 'running' : 'stopped'}`, 'data-field': 'state' },
            address ? 'in the cluster' : 'not in the cluster',
          ),
          topology.controller === nodeId ? ' controller' : '',
        ),
        h('td', { class: 'num', 'data-field': 'leads' }, String(leads.get(nodeId) ?? 0)),
      );
    });
}

/** A consumer group's instances, one row each, and which partitions each holds. */
function groupRows(group: KafkaTopology['groups'][number]): HTMLElement[] {
  const rebalanced = group.lastRebalanceAt
    ? `, last ${new Date(group.lastRebalanceAt).toLocaleTimeString()}`
    : '';
  const members =
    group.members.length > 0 ? group.members : [{ clientId: '–', memberId: '', host: '', partitions: [] }];
  return members.map((member, i) =>
    h(
      'tr',
      { 'data-group': group.groupId },
      i === 0
        ? h(
            'td',
            { rowspan: String(members.length) },
            h('code', {}, group.groupId),
            h(
              'div',
              { class: 'muted' },
              `${group.state}; rebalances seen ${group.rebalancesSeen}${rebalanced}`,
            ),
          )
        : null,
      h(
        'td',
        { title: member.memberId },
        member.clientId,
        member.memberId ? h('span', { class: 'muted' }, ` …${member.memberId.slice(-6)}`) : '',
      ),
      h(
        'td',
        { 'data-field': 'partitions' },
        member.partitions.map((p) => p.replace('.events/', ' ')).join(', ') || '–',
      ),
    ),
  );
}

/** A partition's leader and in-sync replicas, flagged while under-replicated. */
function partitionRow(p: KafkaTopology['partitions'][number]): HTMLElement {
  const underReplicated = p.isr.length < p.replicas.length;
  return h(
    'tr',
    { 'data-partition': `${p.topic}/${p.partition}` },
    h('td', {}, h('code', {}, p.topic), ` ${p.partition}`),
    h(
      'td',
      { 'data-field': 'leader' },
      p.leader < 0 ? h('span', { class: 'badge stopped' }, 'none') : `broker ${p.leader}`,
    ),
    h(
      'td',
      { 'data-field': 'isr', class: underReplicated ? 'error-text' : '' },
      `${p.isr.join(', ')} (${p.isr.length} of ${p.replicas.length})`,
    ),
  );
}
