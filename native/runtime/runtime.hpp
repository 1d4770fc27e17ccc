// The actor runtime in one include: agents, coops, mboxes, multi-consumer channels, sending, the
// environment and the dispatchers (made by name from their registry).
#pragma once

#include "agent.hpp"
#include "channel.hpp"
#include "completion.hpp"
#include "coop.hpp"
#include "dispatchers/registry.hpp"
#include "environment.hpp"
#include "mbox.hpp"
#include "send.hpp"
