// The topology view's model: switches, cables (a pair of directed links) and hosts,
// loaded from GET /api/v1/topology and changed by the event stream's events.
//
// Positions live here too (the layout writes them, the renderer reads them), so an
// element keeps its place across a reload of the document.

/**
 * @typedef {{dpid: string, port: number}} Endpoint
 * @typedef {{src: Endpoint, dst: Endpoint}} ApiLink
 * @typedef {{dpid: string, version: string, peer: string, connected_since: number,
 *   n_ports: number, ports_up: number}} ApiSwitch
 * @typedef {{mac: string, vlan: number | null, attachment: Endpoint, ips: string[],
 *   last_seen_secs_ago: number}} ApiHost
 * @typedef {{switches: ApiSwitch[], links: ApiLink[], hosts: ApiHost[]}} ApiTopology
 */

/**
 * A switch as drawn.
 * @typedef {Object} SwitchNode
 * @property {string} dpid
 * @property {string} version
 * @property {string} peer
 * @property {number} connected_since
 * @property {number} n_ports
 * @property {number} ports_up
 * @property {number} x world position
 * @property {number} y
 * @property {number} vx velocity, for the layout
 * @property {number} vy
 * @property {number} degree cables at this switch
 * @property {boolean} placed has a position
 */

/**
 * A cable: the directed links a->b and b->a between two switch ports, drawn once.
 * @typedef {Object} Cable
 * @property {string} key `a/ap-b/bp`, a < b
 * @property {string} a
 * @property {number} ap
 * @property {string} b
 * @property {number} bp
 * @property {number} dirs bit 1: a->b was found, bit 2: b->a
 */

/**
 * A host as drawn.
 * @typedef {Object} HostNode
 * @property {string} mac
 * @property {number | null} vlan
 * @property {Endpoint} attachment
 * @property {string[]} ips
 * @property {number} seenAt performance.now() - last_seen_secs_ago, when known
 * @property {number} dx offset from its switch, set by placeHosts
 * @property {number} dy
 */

/** The key of the cable between two ends, whichever way it is given. */
export function cableKey(/** @type {Endpoint} */ s, /** @type {Endpoint} */ d) {
  const sk = `${s.dpid}/${s.port}`;
  const dk = `${d.dpid}/${d.port}`;
  return sk < dk ? `${sk}-${dk}` : `${dk}-${sk}`;
}

export class Model {
  constructor() {
    /** @type {Map<string, SwitchNode>} */
    this.switches = new Map();
    /** @type {Map<string, Cable>} */
    this.cables = new Map();
    /** @type {Map<string, HostNode>} */
    this.hosts = new Map();
    /** Bumped by every change: the renderer redraws when it moved. */
    this.version = 0;
    /** Bumped when switches or cables come or go: the layout wakes up. */
    this.structure = 0;
    /** Hosts came, went or moved: their places are computed again. */
    this.hostsDirty = true;
    /** Bumped when the set of switches with hosts changes (see bySwitch()). */
    this.hostsVersion = 0;
    /** The hosts' grouping by switch is to be made again. */
    this._groupsStale = true;
    /** @type {Map<string, HostNode[]>} hosts by attachment switch, see bySwitch() */
    this._bySwitch = new Map();
  }

  /** Replaces everything with `doc`, keeping the places of switches still there. */
  load(/** @type {ApiTopology} */ doc) {
    const old = this.switches;
    this.switches = new Map();
    for (const s of doc.switches) {
      const prev = old.get(s.dpid);
      this.switches.set(s.dpid, makeSwitch(s, prev));
    }
    this.cables = new Map();
    for (const l of doc.links) this._addLink(l);
    this.hosts = new Map();
    for (const h of doc.hosts) this._setHost(h.mac, h.vlan, h.attachment, h.ips, h.last_seen_secs_ago);
    this._degrees();
    this.hostsDirty = this._groupsStale = true;
    this.structure++;
    this.version++;
  }

  /** Applies an event of the stream's `switch` type. */
  switchEvent(/** @type {any} */ e) {
    if (e.event === 'connected') {
      const prev = this.switches.get(e.dpid);
      this.switches.set(
        e.dpid,
        makeSwitch(
          {
            dpid: e.dpid,
            version: e.version ?? prev?.version ?? '',
            peer: e.peer ?? prev?.peer ?? '',
            connected_since: Math.floor(e.time ?? Date.now() / 1000),
            n_ports: e.n_ports ?? prev?.n_ports ?? 0,
            ports_up: prev?.ports_up ?? e.n_ports ?? 0,
          },
          prev,
        ),
      );
    } else if (e.event === 'disconnected') {
      this.switches.delete(e.dpid);
      for (const [k, c] of this.cables) {
        if (c.a === e.dpid || c.b === e.dpid) this.cables.delete(k);
      }
      this._degrees();
    } else {
      return;
    }
    this.structure++;
    this.version++;
  }

  /** Applies an event of the `port` type (counts of ports up). */
  portEvent(/** @type {any} */ e) {
    const s = this.switches.get(e.dpid);
    if (!s) return;
    if (e.event === 'added') s.n_ports++;
    else if (e.event === 'removed') s.n_ports = Math.max(0, s.n_ports - 1);
    if (e.event === 'up') s.ports_up = Math.min(s.n_ports, s.ports_up + 1);
    else if (e.event === 'down') s.ports_up = Math.max(0, s.ports_up - 1);
    this.version++;
  }

  /** Applies an event of the `link` type. */
  linkEvent(/** @type {any} */ e) {
    const l = /** @type {ApiLink} */ (e.link);
    if (!l) return;
    if (e.event === 'added') {
      this._addLink(l);
    } else if (e.event === 'removed') {
      const k = cableKey(l.src, l.dst);
      const c = this.cables.get(k);
      if (!c) return;
      c.dirs &= ~(l.src.dpid === c.a && l.src.port === c.ap ? 1 : 2);
      if (c.dirs === 0) this.cables.delete(k);
    } else {
      return;
    }
    this._degrees();
    this.structure++;
    this.version++;
  }

  /** Applies an event of the `host` type. */
  hostEvent(/** @type {any} */ e) {
    const h = this.hosts.get(e.mac);
    switch (e.event) {
      case 'added':
      case 'moved':
        if (e.attachment) this._setHost(e.mac, e.vlan ?? null, e.attachment, h?.ips ?? e.ips ?? [], 0);
        break;
      case 'ip_added':
        if (h) {
          for (const ip of e.ips ?? []) if (!h.ips.includes(ip)) h.ips.push(ip);
          h.seenAt = performance.now();
          this.version++;
        }
        return;
      case 'removed':
        if (!this.hosts.delete(e.mac)) return;
        break;
      default:
        return;
    }
    this.hostsDirty = this._groupsStale = true;
    this.version++;
  }

  /** Hosts grouped by the switch they are attached to (sorted by MAC). */
  bySwitch() {
    if (this._groupsStale) {
      this._groupsStale = false;
      /** @type {Map<string, HostNode[]>} */
      const m = new Map();
      for (const h of this.hosts.values()) {
        let list = m.get(h.attachment.dpid);
        if (!list) m.set(h.attachment.dpid, (list = []));
        list.push(h);
      }
      for (const list of m.values()) list.sort((p, q) => (p.mac < q.mac ? -1 : 1));
      const before = this._bySwitch;
      if (before.size !== m.size || [...m.keys()].some((d) => !before.has(d))) this.hostsVersion++;
      this._bySwitch = m;
    }
    return this._bySwitch;
  }

  /** The cables at switch `dpid`. */
  cablesOf(/** @type {string} */ dpid) {
    const out = [];
    for (const c of this.cables.values()) if (c.a === dpid || c.b === dpid) out.push(c);
    return out;
  }

  _addLink(/** @type {ApiLink} */ l) {
    const k = cableKey(l.src, l.dst);
    let c = this.cables.get(k);
    if (!c) {
      const [a, b] = k.split('-');
      const [ad, ap] = splitEnd(a);
      const [bd, bp] = splitEnd(b);
      c = { key: k, a: ad, ap, b: bd, bp, dirs: 0 };
      this.cables.set(k, c);
    }
    c.dirs |= l.src.dpid === c.a && l.src.port === c.ap ? 1 : 2;
  }

  _setHost(
    /** @type {string} */ mac,
    /** @type {number | null} */ vlan,
    /** @type {Endpoint} */ attachment,
    /** @type {string[]} */ ips,
    /** @type {number} */ ago,
  ) {
    const prev = this.hosts.get(mac);
    this.hosts.set(mac, {
      mac,
      vlan,
      attachment: { dpid: attachment.dpid, port: attachment.port },
      ips: [...ips],
      seenAt: performance.now() - ago * 1000,
      dx: prev?.dx ?? 0,
      dy: prev?.dy ?? 0,
    });
  }

  _degrees() {
    for (const s of this.switches.values()) s.degree = 0;
    for (const c of this.cables.values()) {
      const a = this.switches.get(c.a);
      const b = this.switches.get(c.b);
      if (a) a.degree++;
      if (b) b.degree++;
    }
  }
}

/** `00:..:01/3` into the dpid and the port (the dpid holds colons, the port does not). */
function splitEnd(/** @type {string} */ end) {
  const i = end.lastIndexOf('/');
  return /** @type {[string, number]} */ ([end.slice(0, i), Number(end.slice(i + 1))]);
}

/** @returns {SwitchNode} */
function makeSwitch(/** @type {ApiSwitch} */ s, /** @type {SwitchNode | undefined} */ prev) {
  return {
    dpid: s.dpid,
    version: s.version,
    peer: s.peer,
    connected_since: s.connected_since,
    n_ports: s.n_ports,
    ports_up: s.ports_up,
    x: prev?.x ?? 0,
    y: prev?.y ?? 0,
    vx: 0,
    vy: 0,
    degree: prev?.degree ?? 0,
    placed: prev?.placed ?? false,
  };
}
