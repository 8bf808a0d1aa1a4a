"""From a validated request to a finished Messages API `Message`.

Order of work, shared by `/v1/messages` and message batches:
1. the reply: the scenario named in the current question, else the demo analyst;
2. at most one reply-shaping fault (when a fault plan is given);
3. `max_tokens` honoured (text cut, stop `max_tokens`);
4. usage: the input split by the prompt-cache simulation (which records the
   cache writes), output tokens by the estimate in `usage`.
Raises `ApiError` for an unknown scenario or a scripted error turn; nothing is
written to the cache in that case.
"""

from __future__ import annotations

from dataclasses import dataclass

from sunrise.fake_llm.conversation import current_turn
from sunrise.fake_llm.demo_analyst import demo_analyst_reply
from sunrise.fake_llm.faults import REPLY_KINDS, FaultPlan, apply_reply_fault, reply_fault_applies
from sunrise.fake_llm.prompt_cache import PromptCache
from sunrise.fake_llm.reply import cut_to_max_tokens
from sunrise.fake_llm.scenarios import ScenarioBook
from sunrise.fake_llm.usage import output_tokens, prompt_blocks
from sunrise.fake_llm.wire import new_id


@dataclass(frozen=True)
class BuiltMessage:
    message: dict
    scenario: str | None
    fault: str | None

    @property
    def stream_error(self) -> bool:
        return self.fault == "stream_error"


class MessageBuilder:
    """Builds messages against one server instance's cache and scenarios."""

    def __init__(self, cache: PromptCache, scenarios: ScenarioBook):
        self._cache = cache
        self._scenarios = scenarios

    def build(
        self,
        body: dict,
        *,
        faults: FaultPlan | None = None,
        stream: bool = False,
        service_tier: str = "standard",
    ) -> BuiltMessage:
        """The Message answering `body` (already validated); see the module docstring."""
        messages = body["messages"]
        turn = current_turn(messages)
        scenario = self._scenarios.selected(turn)
        if scenario is not None:
            reply = self._scenarios.reply(scenario, turn, messages)
        else:
            reply = demo_analyst_reply(body)

        fault = None
        if faults is not None:
            fault = faults.take(
                lambda kind: (
                    kind in REPLY_KINDS and reply_fault_applies(kind, reply, stream, messages)
                )
            )
            if fault is not None:
                reply = apply_reply_fault(fault.kind, reply, messages)

        reply = cut_to_max_tokens(reply, body["max_tokens"])
        split = self._cache.account(body["model"], prompt_blocks(body))
        spent = min(output_tokens(reply.content), body["max_tokens"])
        message = {
            "id": new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": reply.content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "stop_details": reply.stop_details,
            "usage": split.usage(spent, service_tier),
        }
        return BuiltMessage(message, scenario, fault.kind if fault else None)
