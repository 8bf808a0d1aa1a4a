"""/v1/conversations: a tenant's conversation history, most recently active first."""
from __future__ import annotations

from flask import Blueprint, g

from api.auth import authenticate
from api.authz import check_owned, owner_filter
from api.limits import limit_requests
from api.request_parsing import parse_query
from api.resources import resources
from api.schemas.common import ListQuery
from api.schemas.conversations import ConversationList, ConversationOut
from api.services import conversations as conversation_service
from api.spec import spec
from shared.models import Conversation

bp = Blueprint("conversations", __name__, url_prefix="/v1/conversations")
bp.before_request(authenticate)
bp.before_request(limit_requests)


@spec.doc("GET", "/v1/conversations",
          "Conversations, most recently active first (cursor pagination).",
          query=ListQuery, responses={200: ConversationList}, tag="conversations")
@bp.get("")
def list_conversations():
    query = parse_query(ListQuery)
    return conversation_service.list_conversations(resources(), g.tenant_id, limit=query.limit,
                                                   cursor=query.cursor, owner=owner_filter())


@spec.doc("GET", "/v1/conversations/{conversation_id}", "A conversation with its messages.",
          responses={200: ConversationOut}, tag="conversations")
@bp.get("/<conversation_id>")
def get_conversation(conversation_id: str):
    check_owned(Conversation, conversation_id, "conversation")
    return conversation_service.get_conversation(resources(), g.tenant_id, conversation_id)


@spec.doc("DELETE", "/v1/conversations/{conversation_id}",
          "Delete a conversation and its messages; 409 while one of its jobs is in flight.",
          responses={204: None, 409: None}, tag="conversations")
@bp.delete("/<conversation_id>")
def delete_conversation(conversation_id: str):
    check_owned(Conversation, conversation_id, "conversation")
    conversation_service.delete_conversation(resources(), g.tenant_id, conversation_id)
    return "", 204
