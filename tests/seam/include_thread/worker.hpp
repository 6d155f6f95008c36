#pragma once
#include <thread>
