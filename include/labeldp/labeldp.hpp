/// \file
/// Umbrella header: everything in labeldp.
#pragma once

#include "labeldp/core/audit.hpp"
#include "labeldp/core/loss.hpp"
#include "labeldp/core/mechanism.hpp"
#include "labeldp/core/prior.hpp"
#include "labeldp/core/random.hpp"
#include "labeldp/core/sampling.hpp"
#include "labeldp/core/types.hpp"
#include "labeldp/core/validate.hpp"
