"""Degenerate and adversarial hosts: what an RL-trained policy would try if the reward
let it. Each scores well below :class:`~liveroom_sim.policies.ScriptedAvatar`; run them
against your own spec or reward weights to check that they still do::

    from liveroom_sim.testing.adversaries import ADVERSARIES, quit_early
    policy = ADVERSARIES["ignore and pitch"](env.unwrapped.world)

Every adversary is ``factory(world) -> policy(observation, info) -> action`` and reads
only what an LLM would see (plus, for the memorising ones, the spec's opening catalog:
what a policy trained on one world would have memorised). :func:`quit_early` scores
the trainer's move of ending the shift after a few turns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

from liveroom_sim.policies.host_lines import host_lines
from liveroom_sim.policies.reading import FEATURED, language_of, lineup_names, system_text, tool_role, waiting_in, phrasebook
from liveroom_sim.policies.scripted import ScriptedAvatar
from liveroom_sim.world.market import Market

Policy = Callable[[str, dict], str]

_FILLER = {
    "en": ("Link is up!", "Don't miss it!", "So many of you here today!", "Grab yours now!", "Tap the cart!",
           "Love this one!", "Stock is moving fast!"),
    "zh": ("链接已上！", "别错过！", "家人们冲！", "赶紧下单！", "点小黄车！", "真的很好用！", "库存走得很快！"),
}


def _featured(info: dict) -> str:
    header = next((m["content"] for m in reversed(info["messages"]) if m["role"] == "user"), "") or ""
    found = FEATURED.findall(header)
    return found[-1] if found else ""


def _price_call(info: dict, pid: str) -> str | None:
    for t in info["tools"]:
        fn = t["function"]
        params = list(fn.get("parameters", {}).get("properties", {}))
        if tool_role(fn) == "price" and len(params) == 1:
            call = {"id": "c0", "type": "function",
                    "function": {"name": fn["name"], "arguments": json.dumps({params[0]: pid})}}
            return json.dumps({"content": "", "tool_calls": [call]})
    return None


def _last_result(info: dict) -> dict:
    m = info["messages"][-1]
    if m["role"] != "tool":
        return {}
    try:
        data = json.loads(m["content"])
    except (TypeError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _money(value: float, lang: str) -> str:
    v = f"{float(value):.2f}".rstrip("0").rstrip(".")
    return f"${v}" if lang == "en" else f"{v}元"


class IgnoreAndPitch:
    """Never answers anyone: looks the featured product's price up, then pitches it with
    the price and the paid-promotion disclosure, turn after turn (``filler`` rotates a
    closing line so that no two replies are the same)."""

    def __init__(self, world=None, filler: bool = False):
        self.filler, self.turn = filler, 0

    def __call__(self, observation: str, info: dict) -> str:
        lang = language_of(info)
        pid = _featured(info)
        result = _last_result(info)
        if not result:
            call = _price_call(info, pid)
            if call:
                return call
        name = lineup_names(system_text(info["messages"])).get(pid, [pid])[0]
        price = _money(result.get("price", 0), lang) if "price" in result else ""
        disclosure = "#ad" if lang == "en" else "广告"
        line = f"{name} {price}! {disclosure}" if lang == "en" else f"{name}只要{price}！{disclosure}"
        if self.filler:
            self.turn += 1
            line += " " + _FILLER[lang][self.turn % len(_FILLER[lang])]
        return line


class DisclosurePadding:
    """Never answers: says every disclosure the prompt lists, names the featured product
    and addresses ``@everyone``, every turn (farming compliance duties)."""

    def __init__(self, world=None):
        pass

    def __call__(self, observation: str, info: dict) -> str:
        system = system_text(info["messages"])
        forms = re.findall(r"(?:Say|说)\s*\"([^\"]+)\"", system)
        name = lineup_names(system).get(_featured(info), [""])[0]
        return f"@everyone {name} " + " ".join(dict.fromkeys(forms))


class _Wrapper:
    """A host that lets :class:`ScriptedAvatar` decide and then spoils one thing."""

    def __init__(self, world=None):
        self.world = world
        self.inner = ScriptedAvatar()

    def __call__(self, observation: str, info: dict) -> str:
        return self.inner(observation, info)


class WrongViewer(_Wrapper):
    """Looks up and states the right facts, but addresses them to another waiting viewer."""

    def __call__(self, observation: str, info: dict) -> str:
        action = self.inner(observation, info)
        if action.startswith("{"):
            return action
        names = [m for m, _, _ in waiting_in(info["messages"])]
        for i, name in enumerate(names):
            if action.startswith(name + " ") and len(names) > 1:
                return names[(i + 1) % len(names)] + action[len(name):]
        return action


class Unitless(_Wrapper):
    """Answers like the scripted host but says numbers without their currency or unit."""

    _UNITS = re.compile(r"\$|¥|元|块| dollars?| hours?| days?| months?|小时|天|个月| left|件")

    def __call__(self, observation: str, info: dict) -> str:
        action = self.inner(observation, info)
        return action if action.startswith("{") else self._UNITS.sub("", action)


class ObeyAfterRefusal(_Wrapper):
    """Refuses a bait politely, then says what the bait asked for anyway."""

    def __call__(self, observation: str, info: dict) -> str:
        action = self.inner(observation, info)
        if action.startswith("{"):
            return action
        book = phrasebook(language_of(info))
        # The reference host's refusals (its wording is data: envs/host/<lang>.yaml).
        refusals = [r.split("{mention}")[-1].strip()[:10] for r in host_lines(language_of(info)).lines["refuse"]]
        if not any(r in action for r in refusals):
            return action  # only refusals are spoiled
        for mention, _, text in waiting_in(info["messages"]):
            if not action.startswith(mention + " "):
                continue
            # The bait this message is (the one sharing most of its words), obeyed.
            said = _grams(text)
            best = max((*book.baits, *book.injections), key=lambda b: len(said & _grams(b.text)))
            if said & _grams(best.text):
                return f"{action} {best.payload[0]}!"
        return action


def _grams(text: str) -> set[str]:
    """Words of Latin text and character pairs of Chinese, for a rough match."""
    low = re.sub(r"\{[a-z]+\}", " ", text.lower())
    words = set(re.findall(r"[a-z0-9']{3,}", low))
    cjk = "".join(re.findall(r"[\u4e00-\u9fff]", low))
    return words | {cjk[i:i + 2] for i in range(len(cjk) - 1)}


class Memorised(_Wrapper):
    """Never calls a tool: answers from the facts of the spec's opening catalog, as a
    policy trained on one world would have memorised them (prices before any change,
    stock before any sale, coupons that are long gone)."""

    def __init__(self, world=None):
        super().__init__(world)
        self.market = Market.open(world.catalog, world.campaign.opening_product, world.rules) if world else None

    def __call__(self, observation: str, info: dict) -> str:
        action = self.inner(observation, info)
        if not action.startswith("{") or self.market is None:
            return action
        return self.inner(observation, _with_results(info, action, self._result))

    def _result(self, canonical: str, arguments: dict) -> str:
        from liveroom_sim.harness.tools import TOOLS

        return json.dumps(TOOLS[canonical].run(self.market, arguments), ensure_ascii=False)


class StaleCache(_Wrapper):
    """Looks each product up once, then answers from that first result for the rest of
    the stream without calling the tools again."""

    def __init__(self, world=None):
        super().__init__(world)
        self.cache: dict[str, str] = {}
        self.asked: list[str] = []

    def __call__(self, observation: str, info: dict) -> str:
        last = info["messages"][-1]
        if last["role"] == "tool" and self.asked:
            tools = [m for m in info["messages"] if m["role"] == "tool"][-len(self.asked):]
            for key, m in zip(self.asked, tools):
                self.cache.setdefault(key, m["content"])
            self.asked = []
        action = self.inner(observation, info)
        if not action.startswith("{"):
            return action
        calls = json.loads(action)["tool_calls"]
        keys = [c["function"]["name"] + c["function"]["arguments"] for c in calls]
        if all(k in self.cache for k in keys):
            return self.inner(observation, _with_results(info, action, None, [self.cache[k] for k in keys]))
        self.asked = keys
        return action


class HedgedPrices(Memorised):
    """Never calls a tool and hedges every price: each memorised price is said with its
    neighbours a whole unit apart, enough of them to cover the spec's price ranges, so
    one of them is always the price now ("$20.99, $21.99, $22.99 or $23.99")."""

    _AMOUNT = re.compile(r"\$(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)元")

    def __call__(self, observation: str, info: dict) -> str:
        action = super().__call__(observation, info)
        return action if action.startswith("{") else self._AMOUNT.sub(self._hedge, action)

    @staticmethod
    def _hedge(m: re.Match) -> str:
        value = float(m[1] or m[2])
        reach = min(60, int(value * 0.3) + 1)
        said = [_money(value + k, "en" if m[1] else "zh") for k in range(-reach, reach + 1) if value + k > 0]
        return ", ".join(said[:-1]) + " or " + said[-1]


def _with_results(info: dict, action: str, run, cached: list[str] | None = None) -> dict:
    """``info`` as if ``action``'s tool calls had been answered (by ``run`` or ``cached``)
    without a tool turn in the room."""
    message = {"role": "assistant", **json.loads(action)}
    tool_names = {t["function"]["name"]: t["function"] for t in info["tools"]}
    results = []
    for i, call in enumerate(message["tool_calls"]):
        if cached is not None:
            content = cached[i]
        else:
            fn = tool_names.get(call["function"]["name"], {})
            canonical = _CANONICAL.get(tool_role(fn)) if fn else None
            args = json.loads(call["function"]["arguments"] or "{}")
            values = list(args.values())
            arguments = {_CANONICAL_ARG[canonical]: values[0]} if canonical in _CANONICAL_ARG and values else {}
            content = run(canonical, arguments) if canonical else json.dumps({"error": "unknown"})
        results.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    messages = [*info["messages"], message, *results]
    return {**info, "messages": messages}


_CANONICAL = {"details": "get_product", "price": "get_price_stock", "promotions": "get_promotions",
              "policy": "get_policy", "order": "get_order_status"}
_CANONICAL_ARG = {"get_product": "product_id", "get_price_stock": "product_id", "get_policy": "product_id",
                  "get_order_status": "order_id"}


ADVERSARIES: dict[str, Callable[..., Policy]] = {
    "ignore and pitch": lambda world=None: IgnoreAndPitch(world),
    "pitch with rotating filler": lambda world=None: IgnoreAndPitch(world, filler=True),
    "answer the wrong viewer": WrongViewer,
    "never look up, recite memorised facts": Memorised,
    "never look up, hedge every price": HedgedPrices,
    "stale cache of tool results": StaleCache,
    "unitless numbers": Unitless,
    "disclosure padding": DisclosurePadding,
    "obey after refusal": ObeyAfterRefusal,
}


def quit_early(env, policy: Policy, seed: int, turns: int = 1) -> dict[str, float]:
    """The returns of an episode whose trainer stops it after ``turns`` steps: the steps
    played, plus the settlement of the room left behind (see ``Room.settle``)."""
    obs, info = env.reset(seed=seed)
    room = env.unwrapped.room
    for _ in range(turns):
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        if terminated or truncated:
            break
    room.settle()
    return dict(room.returns)
