/* placeholder: being written */
#include "t_helpers.h"
int main(void)
{
	T_SKIP("test_config not written yet");
}
