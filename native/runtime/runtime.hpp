// The actor runtime in one include: agents, coops, mboxes, sending, the environment and the
// dispatchers.
#pragma once

#include "agent.hpp"
#include "completion.hpp"
#include "coop.hpp"
#include "dispatchers/active_group.hpp"
#include "dispatchers/active_obj.hpp"
#include "dispatchers/one_thread.hpp"
#include "dispatchers/thread_pool.hpp"
#include "dispatchers/work_stealing.hpp"
#include "environment.hpp"
#include "mbox.hpp"
#include "send.hpp"
