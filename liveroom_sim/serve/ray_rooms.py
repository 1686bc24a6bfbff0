"""``liveroom serve --ray-address ...``: the sessions' rooms spread over a Ray cluster.

The server process keeps the protocol (WebSockets, MCP, sessions, metrics); the rooms
live in :class:`RoomHost` actors, placed with Ray's ``SPREAD`` strategy over the
cluster's nodes, each holding many rooms. A new session's room goes to the host with the
fewest rooms; its reset, steps and tool calls go to that actor. Episodes are the same as
in process (a room is the same Gymnasium env, seeded the same way), and a host that dies
is an error for its sessions alone: they answer ``RoomCrashed`` until reset on a live one.
"""

from __future__ import annotations

import threading
import uuid


class RoomHost:
    """A Ray actor holding rooms by key (one Gymnasium env each)."""

    def __init__(self):
        self.rooms = {}

    def reset(self, key: str, env_id: str, seed: int | None, options: dict | None) -> dict:
        from liveroom_sim.serve.room import LocalRoom

        if key not in self.rooms:
            self.rooms[key] = LocalRoom(env_id)
        return self.rooms[key].reset(seed, options)

    def step(self, key: str, action: str) -> dict:
        return self.rooms[key].step(action)

    def tools(self, key: str) -> list[dict]:
        return self.rooms[key].tools()

    def close(self, key: str) -> None:
        room = self.rooms.pop(key, None)
        if room is not None:
            room.close()

    def where(self) -> dict:
        import os

        import ray

        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid(), "rooms": len(self.rooms)}


class RayRooms:
    """The pool of room hosts; :meth:`make_room` is the app's ``make_room``.

    Args:
        address: The Ray cluster to join (``auto``, ``ray://host:10001``, ``host:6379``);
            ignored when Ray is already initialized in this process.
        hosts: How many room-host actors to start.
        cpus_per_host: CPUs each host reserves (its rooms' steps run there).
    """

    def __init__(self, address: str | None, hosts: int = 2, cpus_per_host: float = 1.0):
        import ray

        if hosts < 1:
            raise ValueError(f"hosts must be at least 1, got {hosts}")
        if not ray.is_initialized():
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        actor = ray.remote(num_cpus=cpus_per_host, scheduling_strategy="SPREAD")(RoomHost)
        self.address = address
        self.hosts = [actor.remote() for _ in range(hosts)]
        self._load = [0] * hosts
        self._lock = threading.Lock()

    def make_room(self, env_id: str) -> RayRoom:
        with self._lock:
            index = min(range(len(self.hosts)), key=self._load.__getitem__)
            self._load[index] += 1
        return RayRoom(self, index, env_id)

    def released(self, index: int) -> None:
        with self._lock:
            self._load[index] -= 1

    def describe(self) -> dict:
        """What ``/health`` says: the cluster and where the hosts run."""
        import ray

        try:
            where = ray.get([h.where.remote() for h in self.hosts], timeout=10)
        except Exception as e:  # a dead host must not take /health down
            where = [{"error": f"{type(e).__name__}: {e}"}]
        return {"kind": "ray", "address": self.address, "hosts": where,
                "nodes": len({w.get("node_id") for w in where if "node_id" in w})}


class RayRoom:
    """A session's room held by one :class:`RoomHost` (the interface of ``LocalRoom``)."""

    def __init__(self, pool: RayRooms, index: int, env_id: str):
        self.pool, self.index, self.env_id = pool, index, env_id
        self.host, self.key = pool.hosts[index], uuid.uuid4().hex

    def reset(self, seed: int | None, options: dict | None) -> dict:
        return self._get(self.host.reset.remote(self.key, self.env_id, seed, options))

    def step(self, action: str) -> dict:
        return self._get(self.host.step.remote(self.key, action))

    def tools(self) -> list[dict]:
        return self._get(self.host.tools.remote(self.key))

    def close(self) -> None:
        try:
            self.host.close.remote(self.key)
        finally:
            self.pool.released(self.index)

    @staticmethod
    def _get(ref):
        import ray

        return ray.get(ref)
