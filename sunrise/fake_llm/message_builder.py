"""From a validated request to a finished Messages API `Message`.

Order of work, shared by `/v1/messages`, `count_tokens` and message batches:
1. the model's request rules (`model_rules`: 404 for an unknown model, 400 for a
   thinking mode, effort, sampling parameter or `tool_choice` it refuses) and the
   replayed thinking blocks (`thinking.ThinkingSigner.check_replay`);
2. the reply: the scenario named in the current question, else the demo analyst;
3. at most one reply-shaping fault (when a fault plan is given);
4. the thinking blocks the request's thinking mode calls for (`thinking.think`);
5. `max_tokens` honoured (thinking counts; text cut, stop `max_tokens`);
6. usage: the input split by the prompt-cache simulation (which records the
   cache writes), output tokens by the estimate in `usage`, thinking included.
Raises `ApiError` for a broken rule, an unknown scenario or a scripted error
turn; nothing is written to the cache in that case.
"""

from __future__ import annotations

from dataclasses import dataclass

from sunrise.fake_llm.conversation import current_turn
from sunrise.fake_llm.demo_analyst import demo_analyst_reply
from sunrise.fake_llm.faults import REPLY_KINDS, FaultPlan, apply_reply_fault, reply_fault_applies
from sunrise.fake_llm.model_rules import Effective, check_request
from sunrise.fake_llm.prompt_cache import PromptCache
from sunrise.fake_llm.reply import cut_to_max_tokens
from sunrise.fake_llm.scenarios import ScenarioBook
from sunrise.fake_llm.thinking import ThinkingSigner, think
from sunrise.fake_llm.token_estimate import PromptBlock, block_tokens, output_tokens, prompt_blocks
from sunrise.fake_llm.wire import new_id

# The documented empty reply: "exactly 2-3 tokens and no content".
EMPTY_REPLY_TOKENS = 3


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

    def __init__(self, cache: PromptCache, scenarios: ScenarioBook,
                 signer: ThinkingSigner | None = None):
        self._cache = cache
        self._scenarios = scenarios
        self._signer = signer or ThinkingSigner()

    def check(self, body: dict) -> tuple[Effective, list[PromptBlock]]:
        """The model's rules and the replayed thinking of ``body``; raises ApiError."""
        blocks = prompt_blocks(body)
        effective = check_request(body, sum(block.tokens for block in blocks))
        turn = current_turn(body["messages"])
        self._signer.check_replay(body["model"], body["messages"],
                                  turn.question_index if turn else -1)
        return effective, blocks

    def build(
        self,
        body: dict,
        *,
        faults: FaultPlan | None = None,
        stream: bool = False,
        service_tier: str = "standard",
    ) -> BuiltMessage:
        """The Message answering `body` (already validated); see the module docstring."""
        effective, blocks = self.check(body)
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

        reply = think(reply, mode=effective.thinking, display=effective.display,
                      between_tools_as_thinking=effective.between_tools_as_thinking,
                      model=body["model"], question=turn.question if turn else "",
                      signer=self._signer)
        reply = cut_to_max_tokens(reply, body["max_tokens"])
        split = self._cache.account(body["model"], blocks)
        thinking = reply.hidden_thinking_tokens + sum(
            block_tokens(b) for b in reply.content if b["type"] == "thinking")
        spent = (EMPTY_REPLY_TOKENS if not reply.content
                 else output_tokens(reply.content) + reply.hidden_thinking_tokens)
        spent = min(spent, body["max_tokens"])
        message = {
            "id": new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": reply.content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "stop_details": reply.stop_details,
            "usage": split.usage(spent, service_tier, thinking_tokens=min(thinking, spent)),
        }
        return BuiltMessage(message, scenario, fault.kind if fault else None)
